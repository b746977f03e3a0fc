package localcluster

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// liveKueue is the real Kueue on the shared local cluster, started by the
// first test that needs it; it runs until TestMain stops the cluster (it
// manages only Jobs that name a LocalQueue, so other tests see no difference).
var liveKueue struct {
	once sync.Once
	err  error
}

// kueueCluster returns the shared local cluster with Kueue running; it skips
// under -short, and when scripts/kueue.sh has not built Kueue (make kueue).
func kueueCluster(t *testing.T) *Cluster {
	t.Helper()
	root, err := RepoRoot()
	require.NoError(t, err)
	bin, crdDir, err := KueueBinary(root)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("needs the Kueue manager: %v", err)
	}
	require.NoError(t, err)
	c := liveCluster(t)
	liveKueue.once.Do(func() {
		start := time.Now()
		_, liveKueue.err = c.StartKueue(t.Context(), bin, crdDir)
		t.Logf("kueue ready in %s", time.Since(start).Round(time.Millisecond))
	})
	require.NoError(t, liveKueue.err, "start kueue")
	return c
}

// TestKueueAdmitsAtMostQuota submits five single-pod Jobs, created suspended
// with the queue label as Kueue's webhook would make them, to a LocalQueue
// admitting two pods at a time: Kueue must unsuspend them two at a time, and
// all must complete.
func TestKueueAdmitsAtMostQuota(t *testing.T) {
	c := kueueCluster(t)
	ns := testNamespace(t, c)
	const limit, jobs = 2, 5
	require.NoError(t, c.CreateKueueQueue(t.Context(), ns, "agents", limit))

	w, err := c.Clientset.BatchV1().Jobs(ns).Watch(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	start := time.Now()
	for i := range jobs {
		_, err := c.Clientset.BatchV1().Jobs(ns).Create(t.Context(), queuedJob(ns, fmt.Sprintf("job-%d", i), "agents"), metav1.CreateOptions{})
		require.NoError(t, err)
	}

	// A Job runs from the event that unsuspends it to the one that marks it
	// finished, which is when Kueue releases its quota: the watch delivers
	// the events of the namespace's Jobs in order, so counting them is
	// exact. Kueue counts Complete or Failed as finished (Job.Finished).
	running := map[string]bool{}
	finished := map[string]bool{}
	suspendedAtCreate := 0
	maxRunning := 0
	timeout := time.After(3 * liveTimeout)
	for len(finished) < jobs {
		var ev watch.Event
		select {
		case ev = <-w.ResultChan():
		case <-timeout:
			require.FailNowf(t, "jobs did not all finish", "after %s: running %v, finished %v", 3*liveTimeout, running, finished)
		}
		require.NotEqual(t, watch.Error, ev.Type, "watch error: %v", ev.Object)
		job, ok := ev.Object.(*batchv1.Job)
		require.True(t, ok, "watch closed or sent %T", ev.Object)
		if ev.Type == watch.Added && job.Spec.Suspend != nil && *job.Spec.Suspend {
			suspendedAtCreate++
		}
		switch {
		case jobFinished(job):
			delete(running, job.Name)
			finished[job.Name] = true
			assert.True(t, jobComplete(job), "job %s failed: %v", job.Name, job.Status.Conditions)
		case job.Spec.Suspend != nil && !*job.Spec.Suspend:
			running[job.Name] = true
		}
		maxRunning = max(maxRunning, len(running))
		require.LessOrEqual(t, len(running), limit, "Kueue unsuspended more Jobs than the quota: %v", running)
	}
	t.Logf("%d jobs of a 1s pod each done in %s, at most %d at a time", jobs, time.Since(start).Round(time.Millisecond), maxRunning)
	assert.Equal(t, jobs, suspendedAtCreate, "every Job was created suspended")
	assert.Equal(t, limit, maxRunning, "Kueue ran the quota's worth of Jobs at once")

	// Kueue admitted each through a Workload of its own, which it marks
	// finished once it sees the Job finished.
	assert.EventuallyWithT(t, func(ct *assert.CollectT) {
		wls, err := c.Dynamic.Resource(kueueGV.WithResource("workloads")).Namespace(ns).List(t.Context(), metav1.ListOptions{})
		require.NoError(ct, err)
		require.Len(ct, wls.Items, jobs)
		for _, wl := range wls.Items {
			assert.True(ct, hasTrueCondition(wl, "Admitted"), "workload %s admitted", wl.GetName())
			assert.True(ct, hasTrueCondition(wl, "Finished"), "workload %s finished", wl.GetName())
		}
	}, liveTimeout, pollInterval)
}

// queuedJob is a single-pod Job for the LocalQueue queue whose pod runs 1s,
// suspended and labelled as Kueue's mutating webhook would have made it.
func queuedJob(namespace, name, queue string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{KueueQueueLabel: queue}},
		Spec: batchv1.JobSpec{
			Suspend:      new(true),
			BackoffLimit: new(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kwok.opsnorth.io/delay": "1s"}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "ghcr.io/opsnorth/agent:test"}},
				},
			},
		},
	}
}

func jobFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func jobComplete(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func hasTrueCondition(u unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range conds {
		if cond, _ := raw.(map[string]any); cond["type"] == typ && cond["status"] == string(metav1.ConditionTrue) {
			return true
		}
	}
	return false
}
