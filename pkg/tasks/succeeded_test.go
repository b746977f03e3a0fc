package tasks

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// TestAgentSucceeded: which finished pods decide a task's success before
// its Job concludes. The agent finishes at t0+30s (exited).
func TestAgentSucceeded(t *testing.T) {
	deadlineJob := func(seconds int64, start *metav1.Time) *batchv1.Job {
		j := job()
		j.CreationTimestamp = *at(0)
		j.Spec.ActiveDeadlineSeconds = ptr.To(seconds)
		j.Status.StartTime = start
		return j
	}
	tests := []struct {
		name string
		job  *batchv1.Job
		pod  *corev1.Pod
		want bool
	}{
		{name: "succeeded, no deadline", job: job(), pod: pod(corev1.PodSucceeded, exited(0, "Completed", "")), want: true},
		{name: "succeeded well before the deadline", job: deadlineJob(60, at(time.Second)), pod: pod(corev1.PodSucceeded, exited(0, "Completed", "")), want: true},
		{name: "succeeded within the margin: the Job decides", job: deadlineJob(34, at(0)), pod: pod(corev1.PodSucceeded, exited(0, "Completed", ""))},
		{name: "succeeded after the deadline: the Job decides", job: deadlineJob(20, at(0)), pod: pod(corev1.PodSucceeded, exited(0, "Completed", ""))},
		{name: "no start recorded: the deadline runs from the Job's creation", job: deadlineJob(36, nil), pod: pod(corev1.PodSucceeded, exited(0, "Completed", "")), want: true},
		{name: "no start recorded, within the margin of creation", job: deadlineJob(35, nil), pod: pod(corev1.PodSucceeded, exited(0, "Completed", ""))},
		{name: "failed pod: the Job decides", job: job(), pod: pod(corev1.PodFailed, exited(1, "Error", ""))},
		{name: "running pod", job: job(), pod: pod(corev1.PodRunning, running())},
		{name: "no pod", job: job()},
		{name: "succeeded phase without the agent's state", job: job(), pod: pod(corev1.PodSucceeded, corev1.ContainerState{})},
		{name: "no finish time", job: job(), pod: func() *corev1.Pod {
			p := pod(corev1.PodSucceeded, exited(0, "Completed", ""))
			p.Status.ContainerStatuses[0].State.Terminated.FinishedAt = metav1.Time{}
			return p
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ok := agentSucceeded(tt.job, tt.pod)
			assert.Equal(t, tt.want, ok)
			if tt.want {
				assert.Equal(t, outcome{phase: v1alpha1.TaskSucceeded, reason: ReasonCompleted,
					message: "the agent completed successfully", completion: at(30 * time.Second)}, out)
			}
		})
	}
}

// TestComputeStatusFromPod: a task whose pod succeeded is Succeeded with
// the pod's output while its Job is still active; a failed pod leaves it
// Running until the Job fails.
func TestComputeStatusFromPod(t *testing.T) {
	task := fullTask()
	task.Status = v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskRunning, JobName: "summarise", PodName: "summarise-abcde",
		StartTime: at(2 * time.Second), Message: "the agent is running in pod summarise-abcde"}

	got := ComputeStatus(task, Observation{Job: job(), Pod: pod(corev1.PodSucceeded, exited(0, "Completed", `{"k":"v"}`)), Now: now})
	assert.Equal(t, v1alpha1.TaskSucceeded, got.Phase)
	assert.Equal(t, ReasonCompleted, got.Reason)
	assert.Equal(t, map[string]string{"k": "v"}, got.Output)
	assert.Equal(t, ptr.To[int32](0), got.ExitCode)
	assert.Equal(t, at(30*time.Second), got.CompletionTime, "the agent's finish, not the time of the observation")
	assert.True(t, got.Settled)

	got = ComputeStatus(task, Observation{Job: job(), Pod: pod(corev1.PodFailed, exited(3, "Error", "quota")), Now: now})
	assert.Equal(t, v1alpha1.TaskRunning, got.Phase)
	assert.Nil(t, got.ExitCode)
	assert.Nil(t, got.CompletionTime)
}
