package tasks_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tasks"
	"opsnorth.io/scheduler/pkg/testkit"
)

// reconcileCount is controller-runtime's count of agenttask reconciles.
func reconcileCount(t *testing.T) float64 {
	return testkit.ByLabel(t, "controller_runtime_reconcile_total", "controller")[tasks.ControllerName]
}

func histogram(t *testing.T, h prometheus.Histogram) (count uint64, sum float64) {
	got := testkit.Histogram(t, h)
	return got.GetSampleCount(), got.GetSampleSum()
}

// TestMetrics runs one task to success and one to failure and reads every
// metric of the manager from the registry.
func TestMetrics(t *testing.T) {
	k := newCluster(t, "tasks-metrics")
	counter := func(c prometheus.Collector) float64 { return testutil.ToFloat64(c) }
	transitions := func(from, to string) float64 {
		return counter(tasks.PhaseTransitionsTotal.WithLabelValues(from, to))
	}
	before := map[string]float64{
		"created":   counter(tasks.CreatedTotal),
		"succeeded": counter(tasks.CompletedTotal.WithLabelValues("Succeeded")),
		"failed":    counter(tasks.CompletedTotal.WithLabelValues("Failed")),
		"new":       transitions("None", "Pending"),
		"started":   transitions("Pending", "Running"),
		"ok":        transitions("Running", "Succeeded"),
		"ko":        transitions("Running", "Failed"),
	}
	startups, startupSum := histogram(t, tasks.StartupDuration)
	creations, _ := histogram(t, tasks.JobCreationDuration)
	startManager(t, k.ns, testArgs(false)...)

	for name, exit := range map[string]int32{"good": 0, "bad": 1} {
		k.createTask(name)
		job := k.job(name)
		k.waitPhase(name, v1alpha1.TaskPending)
		require.NoError(t, k.c.Get(t.Context(), client.ObjectKeyFromObject(job), job))
		pod := k.runPod(job, job.CreationTimestamp.Add(7*time.Second))
		k.waitPhase(name, v1alpha1.TaskRunning)
		k.terminatePod(pod, exit, "")
		if exit == 0 {
			k.completeJob(job, time.Now())
			k.waitPhase(name, v1alpha1.TaskSucceeded)
		} else {
			k.failJob(job, batchv1.JobReasonBackoffLimitExceeded)
			k.waitPhase(name, v1alpha1.TaskFailed)
		}
	}
	// The manager counts a phase change after its status write returns, so
	// the counters may trail the status the test saw by a moment.
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 2.0, counter(tasks.CreatedTotal)-before["created"])
		assert.Equal(c, 1.0, counter(tasks.CompletedTotal.WithLabelValues("Succeeded"))-before["succeeded"])
		assert.Equal(c, 1.0, counter(tasks.CompletedTotal.WithLabelValues("Failed"))-before["failed"])
		assert.Equal(c, 2.0, transitions("None", "Pending")-before["new"])
		assert.Equal(c, 2.0, transitions("Pending", "Running")-before["started"])
		assert.Equal(c, 1.0, transitions("Running", "Succeeded")-before["ok"])
		assert.Equal(c, 1.0, transitions("Running", "Failed")-before["ko"])
	}, wait, 20*time.Millisecond)
	count, sum := histogram(t, tasks.StartupDuration)
	assert.Equal(t, uint64(2), count-startups)
	assert.InDelta(t, 14.0, sum-startupSum, 0.001, "two startups of 7s each")
	count, _ = histogram(t, tasks.JobCreationDuration)
	assert.Equal(t, uint64(2), count-creations)
}
