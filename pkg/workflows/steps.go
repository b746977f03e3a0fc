package workflows

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// Condition and step reasons.
const (
	ReasonRunning        = "Running"
	ReasonSucceeded      = "Succeeded"
	ReasonInvalidSpec    = "InvalidSpec"
	ReasonTimeout        = "Timeout"
	ReasonStepFailed     = "StepFailed"
	ReasonMissingOutput  = "MissingOutput"
	ReasonOutputTooLarge = "OutputTooLarge"
	// ReasonInputTooLarge: a step's input expands beyond the task input limits.
	ReasonInputTooLarge    = "InputTooLarge"
	ReasonTaskDeleted      = "TaskDeleted"
	ReasonTaskNameConflict = "TaskNameConflict"
	// ReasonStepTaskNotOwned: a task names the workflow as its owner but the
	// manager did not create it (see provenance.go).
	ReasonStepTaskNotOwned = "StepTaskNotOwned"
)

// Budget bounds the outputs stored in a Workflow's status.
type Budget struct {
	// PerStep is the most bytes (keys plus values) one step may store.
	PerStep int
	// Total is the most bytes all steps of a workflow may store together.
	Total int
}

// DefaultBudget is what the kubelet lets an agent return: its termination
// message holds at most v1alpha1.MaxTerminationMessageBytes, and an output
// parsed from it no more. A larger output in a task's status was not
// written by its agent (anyone allowed to patch agenttasks/status can), and
// fails the step rather than grow the Workflow toward the object size limit.
var DefaultBudget = Budget{PerStep: v1alpha1.MaxTerminationMessageBytes, Total: 50 * v1alpha1.MaxTerminationMessageBytes}

// Default retry backoff when the API server did not default it (it does,
// through the CRD's defaults; these keep the controller correct without).
const (
	defaultBackoffSeconds    = 5
	defaultMaxBackoffSeconds = 300
)

// stepView is what one step's AgentTasks say, before workflow-level decisions.
type stepView struct {
	status v1alpha1.StepStatus
	// latest is the task of the latest attempt; nil when none exists.
	latest *v1alpha1.AgentTask
	// retryAt is when the next attempt may start (Retrying steps).
	retryAt time.Time
	// reason is the failure reason of a Failed step.
	reason string
	// refused is why the latest decision on a waiting approval step does
	// not count (refuseDecision).
	refused string
}

// observeStep derives step i's status from the tasks of its current run (by
// deterministic name), the previous status of the step and the tasks known
// to be deleted. A succeeded step stays as it was stored: its output is read
// once, and a retry of the workflow does not run it again.
func observeStep(obs *observation, i int, prev *v1alpha1.StepStatus) stepView {
	step := obs.wf.Spec.Steps[i]
	if prev != nil && prev.Phase == v1alpha1.StepSucceeded {
		return stepView{status: *prev.DeepCopy(), latest: obs.tasks[prev.TaskName]}
	}
	v := stepView{status: v1alpha1.StepStatus{Name: step.Name, Phase: v1alpha1.StepPending}}
	base := int32(0)
	if prev != nil {
		base = prev.FirstAttempt
	}
	v.status.Attempts, v.status.FirstAttempt = base, base
	limit := base + retryLimit(step)
	latest := int32(-1)
	for k := base; k <= limit; k++ {
		if t, ok := obs.tasks[TaskName(obs.wf.Name, step.Name, k)]; ok {
			latest, v.latest = k, t
			if v.status.StartTime == nil {
				v.status.StartTime = new(t.CreationTimestamp)
			}
		}
	}
	if prev != nil && prev.StartTime != nil {
		v.status.StartTime = prev.StartTime
	}
	if prev != nil && prev.Attempts > max(latest+1, base) && obs.lost[TaskName(obs.wf.Name, step.Name, prev.Attempts-1)] {
		v.status.Attempts, v.status.TaskName = prev.Attempts, TaskName(obs.wf.Name, step.Name, prev.Attempts-1)
		v.latest = nil
		return v.fail(obs, prev, ReasonTaskDeleted, fmt.Sprintf("AgentTask %s was deleted before it finished", v.status.TaskName))
	}
	if v.latest == nil {
		return v
	}
	t := v.latest
	v.status.Attempts, v.status.TaskName = latest+1, t.Name
	switch t.Status.Phase {
	case v1alpha1.TaskSucceeded:
		v.status.Phase = v1alpha1.StepSucceeded
		v.status.CompletionTime = finishedAt(t, prev, obs.now)
		v.status.Output = t.Status.Output
		v.status.OutputTruncated = meta.IsStatusConditionTrue(t.Status.Conditions, v1alpha1.ConditionOutputTruncated)
	case v1alpha1.TaskFailed, v1alpha1.TaskTimeout:
		why := taskOutcome(t)
		if latest >= limit {
			msg := fmt.Sprintf("%s after %d attempt(s): %s", t.Status.Phase, latest-base+1, why)
			return v.fail(obs, prev, failReason(t), msg)
		}
		v.status.Phase = v1alpha1.StepRetrying
		v.status.Reason = failReason(t)
		v.retryAt = retryTime(t, backoff(step, latest-base))
		v.status.NextAttemptTime = new(metav1.NewTime(v.retryAt))
		v.status.Message = fmt.Sprintf("attempt %d %s: %s", latest+1, t.Status.Phase, why)
	default:
		v.status.Phase = v1alpha1.StepRunning
	}
	return v
}

// fail marks the step Failed with reason and message, keeping an earlier
// completion time.
func (v stepView) fail(obs *observation, prev *v1alpha1.StepStatus, reason, msg string) stepView {
	v.status.Phase = v1alpha1.StepFailed
	v.status.Reason, v.status.Message = reason, msg
	v.status.NextAttemptTime = nil
	v.status.CompletionTime = finishedAt(v.latest, prev, obs.now)
	v.reason = reason
	return v
}

// stop ends a step that had not finished when the workflow failed: a step
// with a running or retrying attempt is Failed, one that never started Skipped.
func (v *stepView) stop(now time.Time, why string) {
	switch v.status.Phase {
	case v1alpha1.StepPending, v1alpha1.StepWaiting:
		if v.status.Phase == v1alpha1.StepWaiting {
			v.status.CompletionTime = new(stamp(now))
		}
		v.status.Phase, v.status.Reason = v1alpha1.StepSkipped, ""
		v.status.Message = "not started: " + why
	case v1alpha1.StepRunning, v1alpha1.StepRetrying:
		v.status.Phase = v1alpha1.StepFailed
		v.status.Message = "stopped: " + why
		v.status.NextAttemptTime = nil
		v.status.CompletionTime = new(stamp(now))
	}
}

// finishedAt is the completion time of a finished step: the one recorded
// before, else the task's, else now.
func finishedAt(t *v1alpha1.AgentTask, prev *v1alpha1.StepStatus, now time.Time) *metav1.Time {
	if prev != nil && prev.CompletionTime != nil {
		return prev.CompletionTime
	}
	if t != nil && t.Status.CompletionTime != nil {
		return t.Status.CompletionTime
	}
	return new(stamp(now))
}

// retryTime is when the attempt after failed task t may start. The task's
// completionTime (else creationTimestamp) has whole-second precision: the
// failure happened within the second after it, so a non-zero backoff counts
// from the end of that second and is never cut short.
func retryTime(t *v1alpha1.AgentTask, wait time.Duration) time.Time {
	end := t.CreationTimestamp.Time
	if t.Status.CompletionTime != nil {
		end = t.Status.CompletionTime.Time
	}
	if wait > 0 {
		end = end.Truncate(time.Second).Add(time.Second)
	}
	return end.Add(wait)
}

// failReason is the reason a step fails with when its task failed: the
// task's own when its agent never ran (it could not start: Unschedulable,
// ImagePullBackOff, AdmissionDenied...), as that is what the user must fix;
// StepFailed for an agent that ran and failed (the message has its exit).
func failReason(t *v1alpha1.AgentTask) string {
	if t.Status.Phase == v1alpha1.TaskFailed && t.Status.StartTime == nil && t.Status.ExitCode == nil && t.Status.Reason != "" {
		return t.Status.Reason
	}
	return ReasonStepFailed
}

func taskOutcome(t *v1alpha1.AgentTask) string {
	switch {
	case t.Status.Message != "":
		return t.Status.Message
	case t.Status.Reason != "":
		return t.Status.Reason
	}
	return "no reason given"
}

func retryLimit(step v1alpha1.WorkflowStep) int32 {
	if step.Retries == nil {
		return 0
	}
	return step.Retries.Limit
}

// backoff is the wait after failed attempt k (0-based): backoffSeconds
// doubled k times, capped at maxBackoffSeconds.
func backoff(step v1alpha1.WorkflowStep, k int32) time.Duration {
	base, maxWait := time.Duration(defaultBackoffSeconds)*time.Second, time.Duration(defaultMaxBackoffSeconds)*time.Second
	if r := step.Retries; r != nil {
		if r.BackoffSeconds != nil {
			base = time.Duration(*r.BackoffSeconds) * time.Second
		}
		if r.MaxBackoffSeconds != nil {
			maxWait = time.Duration(*r.MaxBackoffSeconds) * time.Second
		}
	}
	d := base
	for range k {
		if d >= maxWait {
			break
		}
		d *= 2
	}
	return min(d, maxWait)
}

// outputSize is the bytes an output takes in status: keys plus values.
func outputSize(out map[string]string) int {
	n := 0
	for k, v := range out {
		n += len(k) + len(v)
	}
	return n
}

// stamp is t as the API stores it: UTC, whole seconds.
func stamp(t time.Time) metav1.Time { return metav1.NewTime(t.UTC().Truncate(time.Second)) }
