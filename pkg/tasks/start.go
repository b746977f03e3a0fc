package tasks

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/refusal"
)

// ReasonStartTimeout: the agent did not start within the start timeout and
// nothing said why.
const ReasonStartTimeout = "StartTimeout"

// maxCauseMessage bounds the part of a status message taken from a pod or
// an event (a scheduler's message grows with the nodes it names).
const maxCauseMessage = 1024

// startCause is what keeps a task's agent from starting.
type startCause struct {
	Reason, Message string
	// Terminal is set when no wait can fix it: the Job's pod template is
	// immutable.
	Terminal bool
}

// waitingReasons are the kubelet's container waiting reasons that keep an
// agent from starting, and whether the cause is terminal. ContainerCreating
// and PodInitializing are progress, not causes.
var waitingReasons = map[string]bool{
	"ErrImagePull":               false,
	"ImagePullBackOff":           false,
	"ErrImageNeverPull":          false,
	"InvalidImageName":           true,
	"CreateContainerConfigError": false,
	"CreateContainerError":       false,
	"RunContainerError":          false,
}

// podCause is what keeps pod pending: its agent container waiting on the
// image or its configuration, or the scheduler finding no node.
func podCause(pod *corev1.Pod) *startCause {
	if pod == nil || pod.Status.Phase != corev1.PodPending {
		return nil
	}
	if cs := agentStatus(pod); cs != nil && cs.State.Waiting != nil {
		w := cs.State.Waiting
		if terminal, ok := waitingReasons[w.Reason]; ok {
			return &startCause{Reason: w.Reason, Terminal: terminal,
				Message: fmt.Sprintf("pod %s: %s", pod.Name, conditions.Truncate(w.Message, maxCauseMessage))}
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
			return &startCause{Reason: conditionReason(c.Reason, "Unschedulable"),
				Message: fmt.Sprintf("pod %s cannot be scheduled: %s", pod.Name, conditions.Truncate(c.Message, maxCauseMessage))}
		}
	}
	return nil
}

// createCause is what the Job controller met creating the Job's pod (its
// FailedCreate event): a missing ServiceAccount or quota may heal, an
// admission denial (Pod Security) cannot.
func createCause(msg string) *startCause {
	if msg == "" {
		return nil
	}
	ref := refusal.OfMessage(msg)
	return &startCause{Reason: ref.Reason, Terminal: ref.Terminal,
		Message: "the Job cannot create the agent's pod: " + conditions.Truncate(ref.Message, maxCauseMessage)}
}

// notStarted is the outcome of a task whose agent has not started: Pending
// with what keeps it (cause may be nil: waiting says what the task waits
// for), or Failed once the cause cannot heal or the start timeout passed.
func notStarted(task *v1alpha1.AgentTask, obs Observation, cause *startCause, waiting string) outcome {
	deadline := startDeadline(task, obs.Job, obs.StartTimeout)
	switch {
	case cause != nil && cause.Terminal:
		return outcome{phase: v1alpha1.TaskFailed, reason: cause.Reason, message: "the agent cannot start: " + cause.Message}
	case !deadline.IsZero() && !obs.Now.Before(deadline):
		reason, msg := ReasonStartTimeout, waiting
		if cause != nil {
			reason, msg = cause.Reason, cause.Message
		}
		return outcome{phase: v1alpha1.TaskFailed, reason: reason,
			message: fmt.Sprintf("the agent did not start within %s: %s", startTimeout(task, obs.StartTimeout), msg)}
	case cause != nil:
		return outcome{phase: v1alpha1.TaskPending, reason: cause.Reason, message: cause.Message}
	}
	return outcome{phase: v1alpha1.TaskPending, message: waiting}
}

// startTimeout is the task's own start timeout, else def (0: none).
func startTimeout(task *v1alpha1.AgentTask, def time.Duration) time.Duration {
	if s := task.Spec.StartTimeoutSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return def
}

// startDeadline is when a task that has not started fails; zero for none.
// It counts from the task's creation, which has whole-second precision, so
// from the end of that second: the deadline is never cut short. Time in a
// Kueue queue is not start time: once its Job exists, a queued task has no
// deadline until Kueue admits the Job, and then counts from the admission
// (the Job's startTime, which the Job controller sets on resume).
func startDeadline(task *v1alpha1.AgentTask, job *batchv1.Job, def time.Duration) time.Time {
	d := startTimeout(task, def)
	if d <= 0 {
		return time.Time{}
	}
	from := task.CreationTimestamp.Time
	if task.Spec.QueueName != "" && job != nil {
		if suspended(job) || job.Status.StartTime == nil {
			return time.Time{}
		}
		from = job.Status.StartTime.Time
	}
	return from.Add(time.Second + d)
}

// suspended reports whether job waits for admission (spec.suspend).
func suspended(job *batchv1.Job) bool { return ptr.Deref(job.Spec.Suspend, false) }
