package tasks

import (
	"fmt"
	"regexp"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/webhook"
)

// Reasons a task ends with, besides the container's own (Error, OOMKilled...).
const (
	ReasonCompleted        = "Completed"
	ReasonError            = "Error"
	ReasonDeadlineExceeded = "DeadlineExceeded"
	ReasonEvicted          = "Evicted"
	ReasonPodDeleted       = "PodDeleted"
	ReasonJobDeleted       = "JobDeleted"
	ReasonJobConflict      = "JobConflict"
	ReasonJobInvalid       = "JobInvalid"
	// ReasonCancelled ends a task whose spec.cancel was set before it ended.
	ReasonCancelled = "Cancelled"
	// ReasonQueued keeps a task Pending while Kueue holds its Job.
	ReasonQueued = "Queued"
)

// Observation is what the reconciler saw of a task's Job and pod.
type Observation struct {
	// Job is the task's Job; nil when there is none (yet).
	Job *batchv1.Job
	// JobGone is true when the Job the task recorded was confirmed deleted.
	JobGone bool
	// FailReason and FailMessage, when set, fail the task before its Job ran:
	// a Job of its name that is not its own, or a Job the API refused.
	FailReason, FailMessage string
	// Waiting explains why there is no Job yet; WaitingReason names it when
	// the API server refused the Job for a while.
	Waiting, WaitingReason string
	// CreateFailure is the message of the Job's latest FailedCreate event:
	// why the Job controller cannot create its pod.
	CreateFailure string
	// StartTimeout is how long a task whose spec sets none may wait for its
	// agent to start; 0 for ever.
	StartTimeout time.Duration
	// Pod is the Job's newest pod; nil when there is none.
	Pod *corev1.Pod
	// PodGone is true when the pod the task recorded was confirmed deleted.
	PodGone bool
	// Now is the time of the observation.
	Now time.Time
}

// outcome is one decision about the task's phase.
type outcome struct {
	phase      v1alpha1.TaskPhase
	reason     string
	message    string
	completion *metav1.Time
}

// ComputeStatus returns the task's status as the observation shows it. It
// never changes a terminal phase, its outcome, output or times, and never
// moves Running back to Pending.
func ComputeStatus(task *v1alpha1.AgentTask, obs Observation) v1alpha1.AgentTaskStatus {
	st := *task.Status.DeepCopy()
	if !st.Phase.IsTerminal() {
		applyObservation(&st, task, obs)
	}
	st.ObservedGeneration = task.Generation
	summarize(&st, task)
	return st
}

// applyObservation moves a non-terminal status to what obs shows.
func applyObservation(st *v1alpha1.AgentTaskStatus, task *v1alpha1.AgentTask, obs Observation) {
	if obs.Job != nil {
		st.JobName = obs.Job.Name
	}
	out := decide(task, st, obs)
	if out.phase == v1alpha1.TaskPending && st.Phase == v1alpha1.TaskRunning {
		out.phase, out.message = v1alpha1.TaskRunning, st.Message
	}
	// The pod is recorded once it ran: a pending pod's name is not worth a
	// status write of its own (each write counts against the task's budget).
	if obs.Pod != nil && out.phase != v1alpha1.TaskPending {
		st.PodName = obs.Pod.Name
		if st.StartTime == nil {
			st.StartTime = startTime(obs.Pod)
		}
	}
	st.Phase, st.Reason, st.Message = out.phase, out.reason, out.message
	if !out.phase.IsTerminal() {
		return
	}
	completion := out.completion
	if completion == nil {
		completion = &metav1.Time{Time: obs.Now.Truncate(time.Second)}
	}
	st.CompletionTime = completion
	st.Duration = ranFor(st.StartTime, completion)
	if term := terminated(obs.Pod); term != nil {
		st.ExitCode = &term.ExitCode
		st.Output = ParseOutput(term.Message)
		if len(term.Message) >= v1alpha1.MaxTerminationMessageBytes {
			meta.SetStatusCondition(&st.Conditions, truncatedCondition(task.Generation, len(term.Message)))
		}
	}
}

// decide runs the checks in order; the first that applies sets the phase.
func decide(task *v1alpha1.AgentTask, st *v1alpha1.AgentTaskStatus, obs Observation) outcome {
	switch {
	case obs.FailReason != "":
		return outcome{phase: v1alpha1.TaskFailed, reason: obs.FailReason, message: obs.FailMessage}
	case obs.JobGone:
		return outcome{phase: v1alpha1.TaskFailed, reason: ReasonJobDeleted,
			message: fmt.Sprintf("Job %s was deleted before the task finished", st.JobName)}
	case obs.Job == nil && task.Spec.Cancel:
		return cancelled(obs)
	case obs.Job == nil:
		var cause *startCause
		if obs.WaitingReason != "" {
			cause = &startCause{Reason: obs.WaitingReason, Message: obs.Waiting}
		}
		return notStarted(task, obs, cause, obs.Waiting)
	}
	if c := jobCondition(obs.Job, batchv1.JobComplete); c != nil {
		return outcome{phase: v1alpha1.TaskSucceeded, reason: ReasonCompleted,
			message: "the agent completed successfully", completion: completionTime(obs.Job, c)}
	}
	if c := failure(obs.Job); c != nil {
		return failed(task, obs, c)
	}
	if out, ok := agentSucceeded(obs.Job, obs.Pod); ok {
		return out
	}
	if task.Spec.Cancel {
		return cancelled(obs)
	}
	if out, ok := disrupted(obs.Pod); ok {
		return out
	}
	if obs.PodGone {
		return outcome{phase: v1alpha1.TaskFailed, reason: ReasonPodDeleted,
			message: fmt.Sprintf("pod %s was deleted before the agent finished", st.PodName)}
	}
	if obs.Pod != nil && obs.Pod.Status.Phase != corev1.PodPending && obs.Pod.Status.Phase != "" {
		return outcome{phase: v1alpha1.TaskRunning, message: fmt.Sprintf("the agent is running in pod %s", obs.Pod.Name)}
	}
	if suspended(obs.Job) && obs.Pod == nil {
		return outcome{phase: v1alpha1.TaskPending, reason: ReasonQueued,
			message: fmt.Sprintf("waiting in LocalQueue %s for admission by Kueue", task.Spec.QueueName)}
	}
	cause := podCause(obs.Pod)
	if cause == nil && obs.Pod == nil {
		cause = createCause(obs.CreateFailure)
	}
	return notStarted(task, obs, cause, fmt.Sprintf("Job %s created; waiting for its pod to run", obs.Job.Name))
}

// cancelled is the outcome of a task cancelled before it ended: what had
// already happened (a Job that concluded, an agent that succeeded) wins.
func cancelled(obs Observation) outcome {
	msg := "the task was cancelled (spec.cancel) before its agent started"
	if obs.Pod != nil && startTime(obs.Pod) != nil {
		msg = fmt.Sprintf("the task was cancelled (spec.cancel); its agent in pod %s is stopped", obs.Pod.Name)
	}
	return outcome{phase: v1alpha1.TaskFailed, reason: ReasonCancelled, message: msg}
}

// failed is the outcome of a Job that failed (or is certain to: FailureTarget).
func failed(task *v1alpha1.AgentTask, obs Observation, c *batchv1.JobCondition) outcome {
	completion := &metav1.Time{Time: c.LastTransitionTime.Truncate(time.Second)}
	if c.LastTransitionTime.IsZero() {
		completion = nil
	}
	if c.Reason == batchv1.JobReasonDeadlineExceeded {
		msg := "the task ran longer than its deadline"
		if task.Spec.TimeoutSeconds != nil {
			msg = fmt.Sprintf("the task ran longer than its timeout of %ds", *task.Spec.TimeoutSeconds)
		}
		return outcome{phase: v1alpha1.TaskTimeout, reason: ReasonDeadlineExceeded, message: msg, completion: completion}
	}
	if out, ok := disrupted(obs.Pod); ok {
		// Evicted or preempted (before it ran, too): that is why the Job failed.
		out.completion = completion
		return out
	}
	if term := terminated(obs.Pod); term != nil {
		reason := conditionReason(term.Reason, ReasonError)
		return outcome{phase: v1alpha1.TaskFailed, reason: reason, completion: completion,
			message: fmt.Sprintf("the agent exited with code %d (%s)", term.ExitCode, reason)}
	}
	msg := c.Message
	if msg == "" {
		msg = "the task's Job failed"
	}
	return outcome{phase: v1alpha1.TaskFailed, reason: conditionReason(c.Reason, ReasonError), message: msg, completion: completion}
}

// disrupted reports a pod evicted or preempted before its Job concluded.
func disrupted(pod *corev1.Pod) (outcome, bool) {
	if pod == nil {
		return outcome{}, false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return outcome{phase: v1alpha1.TaskFailed, reason: ReasonEvicted,
				message: fmt.Sprintf("pod %s was evicted (%s): %s", pod.Name, c.Reason, c.Message)}, true
		}
	}
	if pod.Status.Phase == corev1.PodFailed && pod.Status.Reason == ReasonEvicted {
		return outcome{phase: v1alpha1.TaskFailed, reason: ReasonEvicted,
			message: fmt.Sprintf("pod %s was evicted: %s", pod.Name, pod.Status.Message)}, true
	}
	return outcome{}, false
}

func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if c := &job.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// failure returns the Job's Failed condition, or FailureTarget, which the Job
// controller sets before it deletes the pods of a failing Job: a pod gone
// after it is not a pod deletion but the Job's own doing.
func failure(job *batchv1.Job) *batchv1.JobCondition {
	if c := jobCondition(job, batchv1.JobFailed); c != nil {
		return c
	}
	return jobCondition(job, batchv1.JobFailureTarget)
}

func completionTime(job *batchv1.Job, c *batchv1.JobCondition) *metav1.Time {
	if job.Status.CompletionTime != nil {
		return &metav1.Time{Time: job.Status.CompletionTime.Truncate(time.Second)}
	}
	if !c.LastTransitionTime.IsZero() {
		return &metav1.Time{Time: c.LastTransitionTime.Truncate(time.Second)}
	}
	return nil
}

func agentStatus(pod *corev1.Pod) *corev1.ContainerStatus {
	if pod == nil {
		return nil
	}
	for i := range pod.Status.ContainerStatuses {
		if cs := &pod.Status.ContainerStatuses[i]; cs.Name == ContainerName {
			return cs
		}
	}
	return nil
}

// terminated returns the agent container's terminated state, if it ended.
func terminated(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	cs := agentStatus(pod)
	switch {
	case cs == nil:
		return nil
	case cs.State.Terminated != nil:
		return cs.State.Terminated.DeepCopy()
	case cs.LastTerminationState.Terminated != nil:
		return cs.LastTerminationState.Terminated.DeepCopy()
	}
	return nil
}

// startTime is when the agent container started, or the pod did; nil while
// the pod has not started.
func startTime(pod *corev1.Pod) *metav1.Time {
	if cs := agentStatus(pod); cs != nil {
		if r := cs.State.Running; r != nil && !r.StartedAt.IsZero() {
			return r.StartedAt.DeepCopy()
		}
		if t := cs.State.Terminated; t != nil && !t.StartedAt.IsZero() {
			return t.StartedAt.DeepCopy()
		}
	}
	if pod.Status.Phase != corev1.PodPending && pod.Status.StartTime != nil {
		return pod.Status.StartTime.DeepCopy()
	}
	return nil
}

var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// conditionReason returns reason when it is a valid condition reason, else fallback.
func conditionReason(reason, fallback string) string {
	if len(reason) <= 1024 && reasonPattern.MatchString(reason) {
		return reason
	}
	return fallback
}

// summarize sets the kstatus summary for the phase, WebhookDelivered once
// the task is terminal and has a webhook, and Settled.
func summarize(st *v1alpha1.AgentTaskStatus, task *v1alpha1.AgentTask) {
	st.Settled = settled(st, task)
	gen := task.Generation
	switch st.Phase {
	case v1alpha1.TaskSucceeded:
		conditions.SetSummary(&st.Conditions, gen, conditions.Succeeded, string(st.Phase), st.Message)
	case v1alpha1.TaskFailed, v1alpha1.TaskTimeout:
		conditions.SetSummary(&st.Conditions, gen, conditions.Failed, conditionReason(st.Reason, string(st.Phase)), st.Message)
	case v1alpha1.TaskRunning:
		conditions.SetSummary(&st.Conditions, gen, conditions.InProgress, string(st.Phase), st.Message)
	default:
		conditions.SetSummary(&st.Conditions, gen, conditions.InProgress, conditionReason(st.Reason, string(v1alpha1.TaskPending)), st.Message)
	}
	if task.Spec.WebhookURL == "" || !st.Phase.IsTerminal() {
		meta.RemoveStatusCondition(&st.Conditions, webhook.ConditionDelivered)
		return
	}
	meta.SetStatusCondition(&st.Conditions, webhook.Condition(st.Webhook, gen))
}

// settled reports whether the manager is done with a task of status st: it
// is terminal and its webhook, if it has one, was delivered or given up.
func settled(st *v1alpha1.AgentTaskStatus, task *v1alpha1.AgentTask) bool {
	return st.Phase.IsTerminal() && (task.Spec.WebhookURL == "" || !webhook.Pending(st.Webhook))
}
