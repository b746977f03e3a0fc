package tasks_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tasks"
)

// failCreate records the Job controller's FailedCreate event on job, as it
// does when the API server refuses the Job's pod.
func (k *cluster) failCreate(job *batchv1.Job, message string) {
	k.t.Helper()
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + ".failed-create", Namespace: job.Namespace},
		InvolvedObject: corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Namespace: job.Namespace,
			Name: job.Name, UID: job.UID},
		Reason: "FailedCreate", Message: message, Type: corev1.EventTypeWarning, Count: 1,
		FirstTimestamp: now, LastTimestamp: now, Source: corev1.EventSource{Component: "job-controller"},
	}
	require.NoError(k.t, k.c.Create(context.Background(), ev))
}

// setPodStatus writes a pending pod's status as the scheduler or kubelet would.
func (k *cluster) setPodStatus(pod *corev1.Pod, set func(*corev1.PodStatus)) {
	k.t.Helper()
	require.NoError(k.t, k.c.Get(context.Background(), types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}, pod))
	pod.Status.Phase = corev1.PodPending
	set(&pod.Status)
	require.NoError(k.t, k.c.Status().Update(context.Background(), pod))
}

func unschedulable(st *corev1.PodStatus) {
	st.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available.", LastTransitionTime: metav1.Now()}}
}

func waitingOn(reason, message string) func(*corev1.PodStatus) {
	return func(st *corev1.PodStatus) {
		st.ContainerStatuses = []corev1.ContainerStatus{{Name: tasks.ContainerName, Image: "x",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}}
	}
}

// waitReason waits until the task's status names reason and returns it with
// the time that took.
func (k *cluster) waitReason(name, reason string) (*v1alpha1.AgentTask, time.Duration) {
	k.t.Helper()
	start := time.Now()
	var task *v1alpha1.AgentTask
	require.Eventually(k.t, func() bool {
		task = k.task(name)
		return task.Status.Reason == reason
	}, wait, 20*time.Millisecond, "task %s never gave reason %s", name, reason)
	return task, time.Since(start)
}

// jobGone asserts that the task's Job was deleted: it ended before its agent started.
func (k *cluster) jobGone(name string) {
	k.t.Helper()
	assert.Eventually(k.t, func() bool {
		err := k.c.Get(context.Background(), types.NamespacedName{Namespace: k.ns, Name: name}, &batchv1.Job{})
		return apierrors.IsNotFound(err)
	}, wait, 50*time.Millisecond, "the Job of %s, which cannot start, was not stopped", name)
}

// TestStartCauses: status says within seconds why an agent does not start,
// as the Job controller, scheduler and kubelet report it; a cause that can
// heal keeps the task Pending until it does (or until the start deadline:
// then it fails with that cause), one that cannot fails it at once and
// stops its Job.
func TestStartCauses(t *testing.T) {
	k := newCluster(t, "tasks-start")
	startManager(t, k.ns, testArgs(false)...)
	const saMissing = `Error creating: pods "sa-" is forbidden: error looking up service account tasks-start/agent: serviceaccount "agent" not found`

	t.Run("a missing ServiceAccount heals when it is created", func(t *testing.T) {
		k := k.with(t)
		k.createTask("sa")
		job := k.job("sa")
		k.failCreate(job, saMissing)
		task, took := k.waitReason("sa", "ServiceAccountNotFound")
		t.Logf("reason shown %s after the event", took)
		assert.Equal(t, v1alpha1.TaskPending, task.Status.Phase)
		assert.Equal(t, "the Job cannot create the agent's pod: "+saMissing, task.Status.Message)
		ready := meta.FindStatusCondition(task.Status.Conditions, v1alpha1.ConditionReady)
		require.NotNil(t, ready)
		assert.Equal(t, "ServiceAccountNotFound", ready.Reason)

		k.runPod(job, time.Now())
		running := k.waitPhase("sa", v1alpha1.TaskRunning)
		assert.Empty(t, running.Status.Reason)
	})

	t.Run("a Pod Security refusal ends the task at once", func(t *testing.T) {
		k := k.with(t)
		k.createTask("restricted")
		job := k.job("restricted")
		msg := `Error creating: pods "restricted-x7k2p" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`
		k.failCreate(job, msg)
		task := k.waitPhase("restricted", v1alpha1.TaskFailed)
		assert.Equal(t, "AdmissionDenied", task.Status.Reason)
		assert.Equal(t, "the agent cannot start: the Job cannot create the agent's pod: "+msg, task.Status.Message)
		k.jobGone("restricted")
	})

	t.Run("an invalid image name ends the task at once", func(t *testing.T) {
		k := k.with(t)
		k.createTask("badimage")
		pod := k.createPod(k.job("badimage"))
		k.setPodStatus(pod, waitingOn("InvalidImageName", `Failed to apply default image tag "Bad/Image": couldn't parse image name "Bad/Image": invalid reference format`))
		task := k.waitPhase("badimage", v1alpha1.TaskFailed)
		assert.Equal(t, "InvalidImageName", task.Status.Reason)
		assert.Contains(t, task.Status.Message, "invalid reference format")
		k.jobGone("badimage")
	})

	t.Run("an image pull back-off recovers", func(t *testing.T) {
		k := k.with(t)
		k.createTask("pull")
		job := k.job("pull")
		pod := k.createPod(job)
		k.setPodStatus(pod, waitingOn("ImagePullBackOff", `Back-off pulling image "registry.invalid/agent:1"`))
		task, took := k.waitReason("pull", "ImagePullBackOff")
		t.Logf("reason shown %s after the kubelet's status", took)
		assert.Equal(t, v1alpha1.TaskPending, task.Status.Phase)
		assert.Equal(t, `pod pull-x7k2p: Back-off pulling image "registry.invalid/agent:1"`, task.Status.Message)

		require.NoError(t, k.c.Get(context.Background(), types.NamespacedName{Namespace: k.ns, Name: pod.Name}, pod))
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: ptr.To(metav1.Now()),
			ContainerStatuses: []corev1.ContainerStatus{{Name: tasks.ContainerName, Image: "x",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}}
		require.NoError(t, k.c.Status().Update(context.Background(), pod))
		k.waitPhase("pull", v1alpha1.TaskRunning)
	})

	t.Run("unschedulable until the start deadline fails with that cause", func(t *testing.T) {
		k := k.with(t)
		k.createTask("nodes", func(at *v1alpha1.AgentTask) { at.Spec.StartTimeoutSeconds = ptr.To[int64](4) })
		pod := k.createPod(k.job("nodes"))
		k.setPodStatus(pod, unschedulable)
		task, _ := k.waitReason("nodes", "Unschedulable")
		assert.Equal(t, v1alpha1.TaskPending, task.Status.Phase)
		assert.Equal(t, "pod nodes-x7k2p cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available.",
			task.Status.Message)

		failed := k.waitPhase("nodes", v1alpha1.TaskFailed)
		assert.Equal(t, "Unschedulable", failed.Status.Reason)
		assert.Equal(t, "the agent did not start within 4s: "+task.Status.Message, failed.Status.Message)
		took := failed.Status.CompletionTime.Sub(failed.CreationTimestamp.Time)
		assert.True(t, took >= 4*time.Second && took <= 7*time.Second, "failed %s after its creation, with a start timeout of 4s", took)
		k.jobGone("nodes")
	})
}
