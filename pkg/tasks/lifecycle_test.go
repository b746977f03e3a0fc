package tasks_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tasks"
	"opsnorth.io/scheduler/pkg/testkit"
)

// TestWritesPerLifecycle counts the manager's writes for one task with a
// webhook, from creation to delivered, and the events it reports: a pod that
// runs within the pending-status delay saves the Pending write.
func TestWritesPerLifecycle(t *testing.T) {
	tests := []struct {
		name         string
		namespace    string
		podWaits     bool
		statusWrites int
	}{
		{name: "pod runs within the delay: Running, Succeeded, webhook delivered", namespace: "tasks-writes-fast", statusWrites: 3},
		{name: "pod waits past the delay: Pending first", namespace: "tasks-writes-slow", podWaits: true, statusWrites: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newCluster(t, tt.namespace)
			const pendingDelay = 2 * time.Second
			log := startManager(t, k.ns, append(testArgs(true), "--pending-status-delay="+pendingDelay.String())...).Requests
			rcv := testkit.NewReceiver(t, testkit.OK)
			k.createTask("counted", func(at *v1alpha1.AgentTask) { at.Spec.WebhookURL = rcv.URL })
			job := k.job("counted")
			if tt.podWaits {
				k.waitPhase("counted", v1alpha1.TaskPending)
			}
			pod := k.runPod(job, time.Now())
			k.waitPhase("counted", v1alpha1.TaskRunning)
			k.terminatePod(pod, 0, "ok")
			k.completeJob(job, time.Now())
			k.waitWebhook("counted", func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered })

			// A request is logged when its response arrives, which may trail
			// the status the test saw: wait for the counts...
			jobCreates := func() int { return log.Count(http.MethodPost, "/jobs") }
			statusWrites := func() int { return log.Count(http.MethodPatch, "/agenttasks/counted/status") }
			podReads := func() int { return log.Count(http.MethodGet, "/pods/") }
			assert.EventuallyWithT(t, func(c *assert.CollectT) {
				assert.Equal(c, 1, jobCreates(), "one Job create")
				assert.Equal(c, tt.statusWrites, statusWrites(), "status writes")
				assert.Equal(c, 1, podReads(), "the finished pod is read once, by name, after it left the cache")
			}, wait, 50*time.Millisecond)
			// ...then make sure none follows, past the requeue for the
			// pending-status delay (due at most that long after the Job's
			// creation) and a reconcile's worth of slack.
			assert.Never(t, func() bool {
				return jobCreates() > 1 || statusWrites() > tt.statusWrites || podReads() > 1
			}, pendingDelay+settle, 100*time.Millisecond, "a write or read after the counted ones")
			assert.Equal(t, 1, jobCreates(), "one Job create")
			assert.Equal(t, tt.statusWrites, statusWrites(), "status writes")
			assert.Equal(t, 1, podReads(), "the finished pod is read once, by name, after it left the cache")
			t.Logf("writes: %d Job, %d status, %d event", log.Count(http.MethodPost, "/jobs"),
				log.Count(http.MethodPatch, "/agenttasks/"), log.Count(http.MethodPost, "/events")+log.Count(http.MethodPatch, "/events"))
			assertTaskEvents(t, k, "counted", "Succeeded", "WebhookDelivered")
		})
	}
}

// assertTaskEvents waits until the task's events are exactly reasons: one
// for its end and one per webhook outcome, none for Pending or Running.
func assertTaskEvents(t *testing.T, k *cluster, task string, reasons ...string) {
	t.Helper()
	// Not t.Context(), and no require: Eventually and Never run the
	// condition on their own goroutine, which may still be listing when
	// they (and the test) return.
	list := func() ([]string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		events := &eventsv1.EventList{}
		if err := k.c.List(ctx, events, client.InNamespace(k.ns)); err != nil {
			return nil, err
		}
		var out []string
		for _, e := range events.Items {
			if e.Regarding.Name == task && e.Regarding.Kind == "AgentTask" {
				out = append(out, e.Reason)
			}
		}
		return out, nil
	}
	count := func() int {
		got, err := list()
		if err != nil {
			return -1
		}
		return len(got)
	}
	require.Eventually(t, func() bool { return count() >= len(reasons) }, wait, 100*time.Millisecond, "events of %s", task)
	// Events are written asynchronously: an unexpected extra one may trail
	// the others, so watch for it a while.
	assert.Never(t, func() bool { return count() > len(reasons) }, settle, 100*time.Millisecond, "more events than %v", reasons)
	got, err := list()
	require.NoError(t, err)
	assert.ElementsMatch(t, reasons, got)
}

// TestExistingJob: a Job of the task's name that the cache does not show is
// found through the API server's AlreadyExists and adopted when the task owns
// it; one the task does not own fails the task and is left alone.
func TestExistingJob(t *testing.T) {
	k := newCluster(t, "tasks-existing")
	created := testutil.ToFloat64(tasks.CreatedTotal.WithLabelValues(k.ns))
	mine := k.createTask("hidden")
	// No manager yet: as if a previous leader created the Job and crashed
	// before recording it. Without the manager's labels the cache never sees it.
	hidden := bareJob(k.ns, "hidden")
	hidden.OwnerReferences = []metav1.OwnerReference{{APIVersion: "scheduler.opsnorth.io/v1alpha1", Kind: "AgentTask",
		Name: "hidden", UID: mine.UID, Controller: ptr.To(true)}}
	require.NoError(t, k.c.Create(t.Context(), hidden))
	foreign := bareJob(k.ns, "taken")
	require.NoError(t, k.c.Create(t.Context(), foreign))
	startManager(t, k.ns, testArgs(false)...)

	task := k.waitPhase("hidden", v1alpha1.TaskPending)
	assert.Equal(t, "hidden", task.Status.JobName)
	k.createTask("taken")
	failed := k.waitPhase("taken", v1alpha1.TaskFailed)
	assert.Equal(t, tasks.ReasonJobConflict, failed.Status.Reason)
	assert.Equal(t, "Job taken already exists and is not owned by this AgentTask; delete it or rename the task", failed.Status.Message)
	assert.Zero(t, testutil.ToFloat64(tasks.CreatedTotal.WithLabelValues(k.ns))-created, "no Job was created")
	for _, want := range []*batchv1.Job{hidden, foreign} {
		got := &batchv1.Job{}
		require.NoError(t, k.c.Get(t.Context(), client.ObjectKeyFromObject(want), got))
		assert.Equal(t, want.UID, got.UID)
		assert.Equal(t, want.Generation, got.Generation, "the Job was not modified")
	}
}

func bareJob(namespace, name string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
		}}},
	}
}

// TestStepTaskHasNoEvent: a task a Workflow controls ends without an Event
// of its own (its Workflow reports the step); a standalone task gets one.
func TestStepTaskHasNoEvent(t *testing.T) {
	k := newCluster(t, "tasks-step-events")
	startManager(t, k.ns, testArgs(false)...)
	k.createTask("step", func(at *v1alpha1.AgentTask) {
		at.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "Workflow",
			Name: "wf", UID: "6a3c1c1e-0000-4000-8000-000000000001", Controller: ptr.To(true)}}
	})
	k.createTask("alone")
	k.succeed("step", "")
	k.succeed("alone", "")
	k.waitPhase("step", v1alpha1.TaskSucceeded)
	assertTaskEvents(t, k, "alone", "Succeeded")
	assertTaskEvents(t, k, "step")
}
