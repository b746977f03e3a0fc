package tasks

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// deadlineMargin is how long before its Job's deadline an agent must have
// finished for its pod to decide the task's success: the timestamps have
// whole seconds, and the Job controller checks the deadline a second or so
// after the pod ends (see the package docs).
const deadlineMargin = 5 * time.Second

// agentSucceeded returns the Succeeded outcome of a task whose pod has
// succeeded while its Job has not concluded, when the Job can only
// complete: the agent exited 0 and finished deadlineMargin before the Job's
// deadline, if it has one. The completion time is the agent's finish.
func agentSucceeded(job *batchv1.Job, pod *corev1.Pod) (outcome, bool) {
	if pod == nil || pod.Status.Phase != corev1.PodSucceeded {
		return outcome{}, false
	}
	term := terminated(pod)
	if term == nil || term.ExitCode != 0 || term.FinishedAt.IsZero() {
		return outcome{}, false
	}
	if deadline, ok := jobDeadline(job); ok && !term.FinishedAt.Add(deadlineMargin).Before(deadline) {
		return outcome{}, false
	}
	return outcome{phase: v1alpha1.TaskSucceeded, reason: ReasonCompleted, message: "the agent completed successfully",
		completion: &metav1.Time{Time: term.FinishedAt.Truncate(time.Second)}}, true
}

// jobDeadline is the earliest the Job controller may fail job for its
// activeDeadlineSeconds: from its start, or from its creation while it has
// recorded no start (it starts later, never earlier).
func jobDeadline(job *batchv1.Job) (time.Time, bool) {
	if job.Spec.ActiveDeadlineSeconds == nil {
		return time.Time{}, false
	}
	start := job.CreationTimestamp.Time
	if job.Status.StartTime != nil {
		start = job.Status.StartTime.Time
	}
	return start.Add(time.Duration(*job.Spec.ActiveDeadlineSeconds) * time.Second), true
}
