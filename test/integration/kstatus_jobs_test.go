package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/pkg/tasks"
)

// There is no Job controller or kubelet on the test API server: these play
// their part for a task's Job, as pkg/tasks' tests do.

// job waits for the task's Job, named after it.
func (s *stage) job(t *testing.T, ref objRef) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	require.Eventually(t, func() bool {
		return s.c.Get(context.Background(), client.ObjectKey{Namespace: ref.namespace, Name: ref.name}, job) == nil
	}, stageWait, 50*time.Millisecond, "Job of task %s", ref.name)
	return job
}

// runPod creates the Job's pod as the Job controller would and marks its
// agent container running.
func (s *stage) runPod(t *testing.T, job *batchv1.Job) *corev1.Pod {
	t.Helper()
	labels := map[string]string{"batch.kubernetes.io/job-name": job.Name}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-x7k2p", Namespace: job.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
	s.create(t, pod)
	started := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started,
		ContainerStatuses: []corev1.ContainerStatus{{Name: tasks.ContainerName, Image: pod.Spec.Containers[0].Image,
			Ready: true, Started: ptr.To(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}}}
	require.NoError(t, s.c.Status().Update(context.Background(), pod))
	return pod
}

// terminatePod ends the agent container with exitCode.
func (s *stage) terminatePod(t *testing.T, pod *corev1.Pod, exitCode int32) {
	t.Helper()
	require.NoError(t, s.c.Get(context.Background(), client.ObjectKeyFromObject(pod), pod))
	phase, reason := corev1.PodSucceeded, "Completed"
	if exitCode != 0 {
		phase, reason = corev1.PodFailed, "Error"
	}
	cs := &pod.Status.ContainerStatuses[0]
	pod.Status.Phase, cs.Ready, cs.Started = phase, false, ptr.To(false)
	cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode, Reason: reason,
		StartedAt: cs.State.Running.StartedAt, FinishedAt: metav1.Now()}}
	require.NoError(t, s.c.Status().Update(context.Background(), pod))
}

// failJob writes the status of a Job that failed for reason.
func (s *stage) failJob(t *testing.T, job *batchv1.Job, reason string) {
	t.Helper()
	require.NoError(t, s.c.Get(context.Background(), client.ObjectKeyFromObject(job), job))
	now := metav1.Now()
	job.Status.StartTime = &job.CreationTimestamp
	job.Status.Active, job.Status.Failed = 0, 1
	job.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason, Message: "job failed: " + reason, LastTransitionTime: now, LastProbeTime: now},
		{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: "job failed: " + reason, LastTransitionTime: now, LastProbeTime: now},
	}
	require.NoError(t, s.c.Status().Update(context.Background(), job))
}

// deletePod deletes the pod at once, as a kubelet-confirmed deletion ends.
func (s *stage) deletePod(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	require.NoError(t, s.c.Delete(context.Background(), pod, client.GracePeriodSeconds(0)))
}

// patch merge-patches the object's spec or metadata as a user does.
func (s *stage) patch(t *testing.T, ref objRef, patch string) {
	t.Helper()
	r := schedulerResources[ref.kind]
	_, err := s.dc.Resource(r.gvr).Namespace(ref.namespace).Patch(context.Background(), ref.name, types.MergePatchType,
		[]byte(patch), metav1.PatchOptions{})
	require.NoError(t, err, "patch %s %s", ref.kind, ref.name)
}

// reasonIs holds when the Ready condition's reason is reason.
func reasonIs(reason string) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
				return m["reason"] == reason
			}
		}
		return false
	}
}
