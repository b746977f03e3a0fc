//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/workflows"
)

// TestRetention: with the real garbage collector, a settled task with a
// TTL goes at it with its Job, a finished workflow with its step tasks
// and their Jobs, and nothing else: a task without a TTL and a running one
// stay.
func TestRetention(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	user := fmt.Sprintf("e2e-ttl-%d", time.Now().Unix()%100000)
	create := func(name string, input map[string]string, ttl *int32) {
		at := agentTask(user+"-"+name, input, func(at *v1alpha1.AgentTask) {
			at.Spec.UserID, at.Spec.TTLSecondsAfterSettled = user, ttl
			at.Labels = map[string]string{labelkeys.UserID: user}
		})
		_, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(t.Context(), at, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	create("short", nil, ptr.To[int32](2))
	create("kept", nil, nil)
	create("long", map[string]string{"KWOK_DELAY": "10m"}, ptr.To[int32](0))
	wf := &v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Namespace: taskNamespace, Name: user + "-wf"},
		Spec: v1alpha1.WorkflowSpec{UserID: user, TTLSecondsAfterFinished: ptr.To[int32](1),
			Steps: []v1alpha1.WorkflowStep{{Name: "a", Image: "agent:e2e"}, {Name: "b", Image: "agent:e2e"}}},
	}
	_, err := cs.SchedulerV1alpha1().Workflows(taskNamespace).Create(t.Context(), wf, metav1.CreateOptions{})
	require.NoError(t, err)

	taskGone := func(name string) bool {
		_, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Get(t.Context(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}
	jobGone := func(name string) bool {
		_, err := c.Clientset.BatchV1().Jobs(taskNamespace).Get(t.Context(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}
	require.Eventually(t, func() bool { return taskGone(user+"-short") && jobGone(user+"-short") }, timeout, 200*time.Millisecond,
		"the settled task and its Job are collected at its TTL")
	require.Eventually(t, func() bool {
		_, err := cs.SchedulerV1alpha1().Workflows(taskNamespace).Get(t.Context(), wf.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, timeout, 200*time.Millisecond, "the finished workflow is collected")
	for _, step := range []string{"a", "b"} {
		task := workflows.TaskName(wf.Name, step, 0)
		require.Eventually(t, func() bool { return taskGone(task) && jobGone(task) }, timeout, 200*time.Millisecond,
			"step task %s and its Job go with their workflow", task)
	}
	kept, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Get(t.Context(), user+"-kept", metav1.GetOptions{})
	require.NoError(t, err, "a task without a TTL is kept")
	assert.True(t, kept.Status.Settled)
	assert.False(t, taskGone(user+"-long"), "a running task is kept whatever its TTL")
	_, err = cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Patch(t.Context(), user+"-long", "application/merge-patch+json",
		[]byte(`{"spec":{"cancel":true}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return taskGone(user+"-long") && jobGone(user+"-long") }, timeout, 200*time.Millisecond,
		"cancelled, it settles and goes at its TTL of 0, its Job and pod with it")
}
