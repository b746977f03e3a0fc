package tasks_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tasks"
)

// gone reports whether the task no longer exists.
func (k *cluster) gone(name string) bool {
	_, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Get(k.t.Context(), name, metav1.GetOptions{})
	return apierrors.IsNotFound(err)
}

// TestRetention: settled tasks are deleted at their TTL (their own, else
// the manager's default), counted in the metric; unsettled tasks, tasks
// with no TTL and a Workflow's step tasks stay; tasks settled while no
// manager ran are collected when one starts.
func TestRetention(t *testing.T) {
	k := newCluster(t, "tasks-retention")
	collected := func() float64 { return testutil.ToFloat64(tasks.CollectedTotal.WithLabelValues(k.ns)) }
	first := startManager(t, k.ns, testArgs(true)...)

	// A settled task from before the next manager had a TTL of its own.
	k.createTask("earlier", func(at *v1alpha1.AgentTask) { at.Spec.TTLSecondsAfterSettled = ptr.To[int32](6) })
	k.succeed("earlier", "ok")
	require.True(t, k.waitPhase("earlier", v1alpha1.TaskSucceeded).Status.Settled)
	first.Stop(t)
	before := collected()
	startManager(t, k.ns, append(testArgs(true), "--default-task-ttl-seconds-after-settled=2")...)

	k.createTask("default")
	k.createTask("own", func(at *v1alpha1.AgentTask) { at.Spec.TTLSecondsAfterSettled = ptr.To[int32](0) })
	k.createTask("running")
	k.createTask("step", func(at *v1alpha1.AgentTask) {
		at.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "wf", UID: "uid-wf", Controller: ptr.To(true)}}
	})
	k.succeed("default", "ok")
	k.succeed("own", "ok")
	k.succeed("step", "ok")
	k.runPod(k.job("running"), time.Now())

	settled := k.waitPhase("default", v1alpha1.TaskSucceeded)
	require.True(t, settled.Status.Settled)
	require.Eventually(t, func() bool { return k.gone("own") }, wait, 50*time.Millisecond, "ttl 0: deleted once settled")
	require.Eventually(t, func() bool { return k.gone("earlier") }, wait, 50*time.Millisecond, "settled before the manager started")
	require.Eventually(t, func() bool { return k.gone("default") }, wait, 50*time.Millisecond, "the default TTL")
	gone := time.Now()
	assert.False(t, gone.Before(settled.Status.CompletionTime.Add(2*time.Second)), "deleted %s, completed %s: not before its TTL", gone, settled.Status.CompletionTime)
	assert.Equal(t, before+3, collected())

	k.waitPhase("running", v1alpha1.TaskRunning)
	assert.Never(t, func() bool { return k.gone("running") || k.gone("step") }, 4*time.Second, 100*time.Millisecond,
		"an unsettled task or a step task was deleted")
}
