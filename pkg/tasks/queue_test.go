package tasks_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tasks"
)

// admit plays Kueue and the Job controller on a queued Job: Kueue
// unsuspends it, the Job controller (re)sets its startTime.
func (k *cluster) admit(job *batchv1.Job, at time.Time) {
	k.t.Helper()
	live := &batchv1.Job{}
	require.NoError(k.t, k.c.Get(k.t.Context(), client.ObjectKeyFromObject(job), live))
	live.Spec.Suspend = ptr.To(false)
	require.NoError(k.t, k.c.Update(k.t.Context(), live))
	k.startJob(live, at)
}

// TestQueued: a task with a queueName has a suspended Job in that Kueue
// LocalQueue, says Queued while Kueue holds it, and its start timeout does
// not run until the Job is admitted; then it runs and succeeds as any task.
// The real Kueue admits such Jobs in test/e2e (TestKueueQueue).
func TestQueued(t *testing.T) {
	k := newCluster(t, "tasks-queue")
	startManager(t, k.ns, append(testArgs(false), "--pending-status-delay=0")...)

	t.Run("held, admitted, run", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("queued", func(at *v1alpha1.AgentTask) {
			at.Spec.QueueName = "agents"
			at.Spec.StartTimeoutSeconds = ptr.To[int64](1)
		})
		job := k.job("queued")
		assert.Equal(t, ptr.To(true), job.Spec.Suspend, "created suspended, as Kueue expects")
		assert.Equal(t, "agents", job.Labels[tasks.KueueQueueLabel])
		task, _ := k.waitReason("queued", tasks.ReasonQueued)
		assert.Equal(t, v1alpha1.TaskPending, task.Status.Phase)
		assert.Equal(t, "waiting in LocalQueue agents for admission by Kueue", task.Status.Message)
		k.assertStays("queued", v1alpha1.TaskPending) // 5 s, five times its start timeout

		k.admit(job, time.Now())
		pod := k.runPod(job, time.Now())
		k.waitPhase("queued", v1alpha1.TaskRunning)
		k.terminatePod(pod, 0, `{"answer":"42"}`)
		task = k.waitPhase("queued", v1alpha1.TaskSucceeded)
		assert.Equal(t, map[string]string{"answer": "42"}, task.Status.Output)
	})
	t.Run("admitted but not started: the start timeout counts from admission", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("stuck", func(at *v1alpha1.AgentTask) {
			at.Spec.QueueName = "agents"
			at.Spec.StartTimeoutSeconds = ptr.To[int64](2)
		})
		job := k.job("stuck")
		k.waitReason("stuck", tasks.ReasonQueued)
		time.Sleep(3 * time.Second) // longer than the start timeout, in the queue
		admitted := time.Now()
		k.admit(job, admitted)
		task := k.waitPhase("stuck", v1alpha1.TaskFailed)
		assert.Equal(t, tasks.ReasonStartTimeout, task.Status.Reason)
		assert.GreaterOrEqual(t, time.Since(admitted), 2*time.Second, "failed before its start timeout after admission")
	})
	t.Run("cancelled while queued", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("dropped", func(at *v1alpha1.AgentTask) { at.Spec.QueueName = "agents" })
		k.job("dropped")
		k.waitReason("dropped", tasks.ReasonQueued)
		k.cancel("dropped")
		task := k.waitPhase("dropped", v1alpha1.TaskFailed)
		assert.Equal(t, tasks.ReasonCancelled, task.Status.Reason)
		k.jobStopped("dropped")
	})
}
