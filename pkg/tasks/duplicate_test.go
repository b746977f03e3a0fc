package tasks_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tasks"
)

// TestNoDuplicateJob runs two managers side by side on the same tasks (as two
// leaders would during a botched handover), then replaces both with a third
// one mid-flight: every task keeps exactly its first Job.
func TestNoDuplicateJob(t *testing.T) {
	const n = 12
	k := newCluster(t, "tasks-dup")
	created := func() float64 { return testutil.ToFloat64(tasks.CreatedTotal.WithLabelValues(k.ns)) }
	createdBefore := created()
	a := startManager(t, k.ns, testArgs(false)...)
	b := startManager(t, k.ns, testArgs(false)...)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("dup-%d", i)
		k.createTask(names[i])
	}
	jobUIDs := map[string]types.UID{}
	for _, name := range names {
		task := k.waitPhase(name, v1alpha1.TaskPending)
		jobs := k.jobsOf(name)
		require.Len(t, jobs, 1, name)
		assert.True(t, metav1.IsControlledBy(&jobs[0], task), name)
		jobUIDs[name] = jobs[0].UID
	}
	// The Pending status may have been written by the manager that adopted
	// the Job, before the one that created it counted the creation.
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, float64(n), created()-createdBefore,
			"each Job is created by exactly one manager; the other adopts it")
	}, wait, 20*time.Millisecond)

	a.Stop(t)
	b.Stop(t)
	started := time.Now().Truncate(time.Second)
	for _, name := range names[:n/2] {
		k.runPod(k.job(name), started)
	}
	reconciled := reconcileCount(t)
	startManager(t, k.ns, testArgs(false)...)
	for _, name := range names[:n/2] {
		k.waitPhase(name, v1alpha1.TaskRunning)
	}
	// The third manager shows nothing for the tasks still Pending: let it
	// reconcile at least as often as there are tasks, then watch that it
	// creates no Job.
	require.Eventually(t, func() bool { return reconcileCount(t)-reconciled >= n }, wait, 50*time.Millisecond)
	assert.Never(t, func() bool { return created()-createdBefore != float64(n) },
		settle, 50*time.Millisecond, "a Job was created again")
	for _, name := range names {
		jobs := k.jobsOf(name)
		require.Len(t, jobs, 1, name)
		assert.Equal(t, jobUIDs[name], jobs[0].UID, "%s: the Job was replaced", name)
	}
	for _, name := range names[n/2:] {
		assert.Equal(t, v1alpha1.TaskPending, k.task(name).Status.Phase, name)
	}
	assert.Equal(t, float64(n), created()-createdBefore)
}
