package tasks_test

import (
	"context"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/pkg/tasks"
)

// There is no Job controller on the test API server: these helpers play its
// part (and the kubelet's) by creating pods and writing Job and pod status.

// createPod creates the Job's pod as the Job controller would, still pending.
func (k *cluster) createPod(job *batchv1.Job) *corev1.Pod {
	k.t.Helper()
	labels := map[string]string{"batch.kubernetes.io/job-name": job.Name}
	for key, v := range job.Spec.Template.Labels {
		labels[key] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: job.Name + "-x7k2p", Namespace: job.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
	require.NoError(k.t, k.c.Create(context.Background(), pod))
	return pod
}

// runPod creates the Job's pod and marks its agent container running since startedAt.
func (k *cluster) runPod(job *batchv1.Job, startedAt time.Time) *corev1.Pod {
	k.t.Helper()
	pod := k.createPod(job)
	pod.Status = corev1.PodStatus{
		Phase:     corev1.PodRunning,
		StartTime: &metav1.Time{Time: startedAt},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: tasks.ContainerName, Image: pod.Spec.Containers[0].Image, Ready: true, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: startedAt}}},
		}},
	}
	require.NoError(k.t, k.c.Status().Update(context.Background(), pod))
	return pod
}

// terminatePod marks the agent container terminated with exitCode and the
// termination message.
func (k *cluster) terminatePod(pod *corev1.Pod, exitCode int32, message string) {
	k.t.Helper()
	require.NoError(k.t, k.c.Get(context.Background(), client.ObjectKeyFromObject(pod), pod))
	phase, reason := corev1.PodSucceeded, "Completed"
	if exitCode != 0 {
		phase, reason = corev1.PodFailed, "Error"
	}
	started := pod.Status.ContainerStatuses[0].State.Running.StartedAt
	pod.Status.Phase = phase
	pod.Status.ContainerStatuses[0].Ready = false
	pod.Status.ContainerStatuses[0].Started = ptr.To(false)
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: exitCode, Reason: reason, Message: message, StartedAt: started, FinishedAt: metav1.Now(),
	}}
	require.NoError(k.t, k.c.Status().Update(context.Background(), pod))
}

// completeJob writes the status of a Job whose pod succeeded.
func (k *cluster) completeJob(job *batchv1.Job, completedAt time.Time) {
	k.t.Helper()
	k.finishJob(job, func(st *batchv1.JobStatus, now metav1.Time) {
		st.StartTime = &metav1.Time{Time: completedAt.Add(-time.Second)}
		st.Active, st.Succeeded = 0, 1
		st.CompletionTime = &metav1.Time{Time: completedAt}
		st.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonCompletionsReached, LastTransitionTime: now, LastProbeTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonCompletionsReached, LastTransitionTime: now, LastProbeTime: now},
		}
	})
}

// failJob writes the status of a Job that failed for reason
// (BackoffLimitExceeded, DeadlineExceeded).
func (k *cluster) failJob(job *batchv1.Job, reason string) {
	k.t.Helper()
	k.finishJob(job, func(st *batchv1.JobStatus, now metav1.Time) {
		st.Active, st.Failed = 0, 1
		st.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason, Message: "job failed: " + reason, LastTransitionTime: now, LastProbeTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: "job failed: " + reason, LastTransitionTime: now, LastProbeTime: now},
		}
	})
}

func (k *cluster) finishJob(job *batchv1.Job, set func(*batchv1.JobStatus, metav1.Time)) {
	k.t.Helper()
	require.NoError(k.t, k.c.Get(context.Background(), client.ObjectKeyFromObject(job), job))
	now := metav1.Now()
	if job.Status.StartTime == nil {
		job.Status.StartTime = &metav1.Time{Time: job.CreationTimestamp.Time}
	}
	set(&job.Status, now)
	require.NoError(k.t, k.c.Status().Update(context.Background(), job))
}

// deletePod deletes the pod at once, as a kubelet-confirmed deletion would end.
func (k *cluster) deletePod(pod *corev1.Pod) {
	k.t.Helper()
	require.NoError(k.t, k.c.Delete(context.Background(), pod, client.GracePeriodSeconds(0)))
}

// startJob records the Job's start and its active pod, as the Job
// controller does when it creates the pod, without concluding it.
func (k *cluster) startJob(job *batchv1.Job, startedAt time.Time) {
	k.t.Helper()
	k.finishJob(job, func(st *batchv1.JobStatus, _ metav1.Time) {
		st.StartTime = &metav1.Time{Time: startedAt}
		st.Active = 1
	})
}
