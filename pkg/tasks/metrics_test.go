package tasks_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/tasks"
	"opsnorth.io/scheduler/pkg/testkit"
)

// reconcileCount is controller-runtime's count of agenttask reconciles.
func reconcileCount(t *testing.T) float64 {
	return testkit.ByLabel(t, "controller_runtime_reconcile_total", "controller")[tasks.ControllerName]
}

// active is the gauge of the tasks of namespace in phase, as the leader reports it.
func active(t *testing.T, namespace, phase string) float64 {
	return testkit.Sum(t, "opsnorth_agenttasks_active", map[string]string{"task_namespace": namespace, "phase": phase})
}

func histogram(t *testing.T, h prometheus.Observer) (count uint64, sum float64) {
	got := testkit.Histogram(t, h.(prometheus.Histogram))
	return got.GetSampleCount(), got.GetSampleSum()
}

// TestMetrics runs one task to success and one to failure, with a manager
// restart while both run, and reads every metric of the manager from the
// registry, by the tasks' namespace.
func TestMetrics(t *testing.T) {
	k := newCluster(t, "tasks-metrics")
	counter := func(c prometheus.Collector) float64 { return testutil.ToFloat64(c) }
	transitions := func(from, to string) float64 {
		return counter(tasks.PhaseTransitionsTotal.WithLabelValues(k.ns, from, to))
	}
	before := map[string]float64{
		"created":   counter(tasks.CreatedTotal.WithLabelValues(k.ns)),
		"succeeded": counter(tasks.CompletedTotal.WithLabelValues(k.ns, "Succeeded")),
		"failed":    counter(tasks.CompletedTotal.WithLabelValues(k.ns, "Failed")),
		"new":       transitions("None", "Pending"),
		"started":   transitions("Pending", "Running"),
		"ok":        transitions("Running", "Succeeded"),
		"ko":        transitions("Running", "Failed"),
	}
	startups, startupSum := histogram(t, tasks.StartupDuration.WithLabelValues(k.ns))
	creations, _ := histogram(t, tasks.JobCreationDuration.WithLabelValues(k.ns))
	podCreations, podCreationSum := histogram(t, tasks.PodCreationDuration.WithLabelValues(k.ns))
	phaseRuns := func() uint64 {
		n, _ := histogram(t, manager.PhaseDuration.WithLabelValues(tasks.ControllerName, "ensureJob", "success"))
		return n
	}
	ensured := phaseRuns()
	m := startManager(t, k.ns, testArgs(false)...)

	exits := map[string]int32{"good": 0, "bad": 1}
	pods := map[string]*corev1.Pod{}
	jobs := map[string]*batchv1.Job{}
	for name := range exits {
		k.createTask(name)
		job := k.job(name)
		k.waitPhase(name, v1alpha1.TaskPending)
		require.NoError(t, k.c.Get(t.Context(), client.ObjectKeyFromObject(job), job))
		jobs[name], pods[name] = job, k.runPod(job, job.CreationTimestamp.Add(7*time.Second))
		k.waitPhase(name, v1alpha1.TaskRunning)
	}
	// The status write the test saw may return to the manager a moment
	// later; a manager stopped before that never counts it. Wait for the
	// counts, so the restart below is what is measured.
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 2.0, transitions("Pending", "Running")-before["started"])
		n, _ := histogram(t, tasks.StartupDuration.WithLabelValues(k.ns))
		assert.Equal(c, uint64(2), n-startups)
		n, _ = histogram(t, tasks.PodCreationDuration.WithLabelValues(k.ns))
		assert.Equal(c, uint64(2), n-podCreations)
	}, wait, 20*time.Millisecond)
	assert.Equal(t, 2.0, active(t, k.ns, "Running"), "both tasks run")
	assert.Zero(t, active(t, k.ns, "Pending"))
	assert.Equal(t, 1.0, testkit.Sum(t, "opsnorth_build_info", map[string]string{"manager": "tasks", "version": manager.Version()}))
	// A manager that starts anew reconciles the running tasks again: their
	// startup and pod creation are not observed twice.
	m.Stop(t)
	startManager(t, k.ns, testArgs(false)...)
	for name, exit := range exits {
		k.terminatePod(pods[name], exit, "")
		if exit == 0 {
			k.completeJob(jobs[name], time.Now())
			k.waitPhase(name, v1alpha1.TaskSucceeded)
		} else {
			k.failJob(jobs[name], batchv1.JobReasonBackoffLimitExceeded)
			k.waitPhase(name, v1alpha1.TaskFailed)
		}
	}
	// The manager counts a phase change after its status write returns, so
	// the counters may trail the status the test saw by a moment.
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 2.0, counter(tasks.CreatedTotal.WithLabelValues(k.ns))-before["created"])
		assert.Equal(c, 1.0, counter(tasks.CompletedTotal.WithLabelValues(k.ns, "Succeeded"))-before["succeeded"])
		assert.Equal(c, 1.0, counter(tasks.CompletedTotal.WithLabelValues(k.ns, "Failed"))-before["failed"])
		assert.Equal(c, 2.0, transitions("None", "Pending")-before["new"])
		assert.Equal(c, 2.0, transitions("Pending", "Running")-before["started"])
		assert.Equal(c, 1.0, transitions("Running", "Succeeded")-before["ok"])
		assert.Equal(c, 1.0, transitions("Running", "Failed")-before["ko"])
	}, wait, 20*time.Millisecond)
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Zero(c, active(t, k.ns, "Running"), "ended tasks are not active")
	}, wait, 20*time.Millisecond)
	count, sum := histogram(t, tasks.StartupDuration.WithLabelValues(k.ns))
	assert.Equal(t, uint64(2), count-startups)
	assert.InDelta(t, 14.0, sum-startupSum, 0.001, "two startups of 7s each")
	count, _ = histogram(t, tasks.JobCreationDuration.WithLabelValues(k.ns))
	assert.Equal(t, uint64(2), count-creations)
	count, sum = histogram(t, tasks.PodCreationDuration.WithLabelValues(k.ns))
	assert.Equal(t, uint64(2), count-podCreations, "once per task, across the restart")
	assert.Less(t, sum-podCreationSum, 60.0, "each pod was created within seconds of its Job")
	assert.Greater(t, phaseRuns()-ensured, uint64(2), "the reconcile phases are timed")
}
