package tasks_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tasks"
)

// TestOutcomeFromThePod: the test API server has no Job controller, so each
// Job stays active unless the test concludes it: a task the pod alone
// decides concludes without it.
func TestOutcomeFromThePod(t *testing.T) {
	k := newCluster(t, "tasks-pod-outcome")
	startManager(t, k.ns, testArgs(false)...)

	t.Run("a succeeded pod concludes the task while its Job is active", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("ok", func(at *v1alpha1.AgentTask) { at.Spec.TimeoutSeconds = ptr.To[int64](600) })
		job := k.job("ok")
		k.startJob(job, time.Now())
		pod := k.runPod(job, time.Now())
		k.waitPhase("ok", v1alpha1.TaskRunning)
		exited := time.Now()
		k.terminatePod(pod, 0, `{"answer":"42"}`)
		task := k.waitPhase("ok", v1alpha1.TaskSucceeded)
		t.Logf("Succeeded %s after the pod", time.Since(exited))
		assert.Equal(t, map[string]string{"answer": "42"}, task.Status.Output)
		assert.Equal(t, int32(0), *task.Status.ExitCode)
		assert.Equal(t, tasks.ReasonCompleted, task.Status.Reason)
		assert.Equal(t, "the agent completed successfully", task.Status.Message)
		finished := k.podStatus(pod).ContainerStatuses[0].State.Terminated.FinishedAt
		assert.True(t, task.Status.CompletionTime.Equal(&finished), "completion %v is the agent's finish %v", task.Status.CompletionTime, finished)
		assert.True(t, task.Status.Settled)
		k.assertJobUntouched(job)
	})
	t.Run("a pod that finished before the task recorded it", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("quick")
		job := k.job("quick")
		pod := k.createPod(job)
		k.succeedPending(pod, "done")
		task := k.waitPhase("quick", v1alpha1.TaskSucceeded)
		assert.Equal(t, pod.Name, task.Status.PodName)
		assert.Equal(t, map[string]string{"result": "done"}, task.Status.Output)
		k.assertJobUntouched(job)
	})
	t.Run("a failed pod waits for the Job's failure", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("exit3")
		job := k.job("exit3")
		pod := k.runPod(job, time.Now())
		k.waitPhase("exit3", v1alpha1.TaskRunning)
		k.terminatePod(pod, 3, "model quota exhausted")
		k.assertStays("exit3", v1alpha1.TaskRunning)
		k.failJob(job, batchv1.JobReasonBackoffLimitExceeded)
		task := k.waitPhase("exit3", v1alpha1.TaskFailed)
		assert.Equal(t, int32(3), *task.Status.ExitCode)
		assert.Equal(t, "the agent exited with code 3 (Error)", task.Status.Message)
	})
	t.Run("a pod that finished after the timeout waits for the Job", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("late", func(at *v1alpha1.AgentTask) { at.Spec.TimeoutSeconds = ptr.To[int64](5) })
		job := k.job("late")
		k.startJob(job, time.Now().Add(-10*time.Second))
		pod := k.runPod(job, time.Now().Add(-10*time.Second))
		k.waitPhase("late", v1alpha1.TaskRunning)
		k.terminatePod(pod, 0, `{"answer":"late"}`)
		k.assertStays("late", v1alpha1.TaskRunning)
		k.failJob(job, batchv1.JobReasonDeadlineExceeded)
		task := k.waitPhase("late", v1alpha1.TaskTimeout)
		assert.Equal(t, tasks.ReasonDeadlineExceeded, task.Status.Reason)
	})
}

// succeedPending moves a pending pod straight to Succeeded with message,
// as a kubelet reports an agent that ran between two status updates.
func (k *cluster) succeedPending(pod *corev1.Pod, message string) {
	k.t.Helper()
	now := metav1.Now()
	pod.Status = corev1.PodStatus{Phase: corev1.PodSucceeded, StartTime: &now,
		ContainerStatuses: []corev1.ContainerStatus{{Name: tasks.ContainerName, Image: pod.Spec.Containers[0].Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", Message: message, StartedAt: now, FinishedAt: now}}}}}
	require.NoError(k.t, k.c.Status().Update(k.t.Context(), pod))
}

func (k *cluster) podStatus(pod *corev1.Pod) corev1.PodStatus {
	k.t.Helper()
	live := &corev1.Pod{}
	require.NoError(k.t, k.c.Get(k.t.Context(), client.ObjectKeyFromObject(pod), live))
	return live.Status
}

// assertJobUntouched: the task neither deleted nor changed its Job.
func (k *cluster) assertJobUntouched(job *batchv1.Job) {
	k.t.Helper()
	assert.Never(k.t, func() bool {
		live := &batchv1.Job{}
		err := k.c.Get(k.t.Context(), client.ObjectKeyFromObject(job), live)
		return err != nil || live.DeletionTimestamp != nil || live.Generation != job.Generation
	}, settle, 100*time.Millisecond, "the Job was deleted or changed")
}

// assertStays: the task keeps phase for the settle period.
func (k *cluster) assertStays(name string, phase v1alpha1.TaskPhase) {
	k.t.Helper()
	assert.Never(k.t, func() bool { return k.task(name).Status.Phase != phase }, settle, 100*time.Millisecond,
		"task %s left phase %s before its Job concluded", name, phase)
}
