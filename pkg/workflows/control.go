package workflows

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/webhook"
)

// Control reasons: what spec.suspend, spec.stop and spec.retry lead to.
const (
	ReasonSuspended = "Suspended"
	ReasonStopped   = "Stopped"
	ReasonRetried   = "Retried"
)

// ConditionSuspended is True while spec.suspend holds the workflow.
const ConditionSuspended = "Suspended"

// suspended reports whether the workflow may start no step now.
func suspended(wf *v1alpha1.Workflow) bool { return wf.Spec.Suspend && !wf.Spec.Stop }

// account moves the suspension clock of st: a suspension starts at now, and
// one that ended adds its length to SuspendedSeconds.
func account(st *v1alpha1.WorkflowStatus, on bool, now time.Time) {
	switch {
	case on && st.SuspendTime == nil:
		st.SuspendTime = new(stamp(now))
	case !on && st.SuspendTime != nil:
		st.SuspendedSeconds += int64(stamp(now).Sub(st.SuspendTime.Time) / time.Second)
		st.SuspendTime = nil
	}
}

// deadline is when the current run times out; zero without a timeout. It
// counts from the run's start (the last retry, else the first start) and,
// unless spec.timeoutCountsSuspension, leaves out time spent suspended: while
// suspended it moves along with the clock and cannot pass.
func deadline(wf *v1alpha1.Workflow, st *v1alpha1.WorkflowStatus, now time.Time) time.Time {
	if wf.Spec.TimeoutSeconds == nil {
		return time.Time{}
	}
	start := st.StartTime.Time
	if n := len(st.RetryHistory); n > 0 {
		start = st.RetryHistory[n-1].Time.Time
	}
	// Stored times have whole-second precision: the run started within the
	// second after start, so the deadline counts from the end of that second.
	d := start.Add(time.Second + time.Duration(*wf.Spec.TimeoutSeconds)*time.Second)
	if wf.Spec.TimeoutCountsSuspension {
		return d
	}
	d = d.Add(time.Duration(st.SuspendedSeconds) * time.Second)
	if st.SuspendTime != nil {
		d = d.Add(now.Sub(st.SuspendTime.Time))
	}
	return d
}

// retryRequested reports whether spec.retry asks to run a Failed workflow again.
func retryRequested(wf *v1alpha1.Workflow) bool {
	return wf.Status.Phase == v1alpha1.WorkflowFailed && wf.Spec.Retry > wf.Status.Retries && !wf.Spec.Stop
}

// retryStatus is the status that starts the next run of a Failed workflow:
// succeeded steps keep their status and outputs; the others are Pending
// again, their next attempt numbered after the last one, so their tasks get
// new names and the failed ones stay for their logs. The retry is recorded
// and the completion webhook is due again at the run's end.
func retryStatus(wf *v1alpha1.Workflow, now time.Time) v1alpha1.WorkflowStatus {
	st := wf.Status.DeepCopy()
	rec := v1alpha1.RetryRecord{Time: stamp(now), Reason: ReasonStepFailed, Message: st.Message}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady); c != nil {
		rec.Reason = c.Reason
	}
	for i, s := range st.StepStatuses {
		if done(s) {
			continue
		}
		rec.Steps = append(rec.Steps, s.Name)
		st.StepStatuses[i] = v1alpha1.StepStatus{Name: s.Name, Phase: v1alpha1.StepPending, Attempts: s.Attempts, FirstAttempt: s.Attempts}
	}
	st.Retries++
	st.RetryHistory = append(st.RetryHistory, rec)
	if n := len(st.RetryHistory); n > maxRetryHistory {
		st.RetryHistory = st.RetryHistory[n-maxRetryHistory:]
	}
	st.Phase = v1alpha1.WorkflowRunning
	st.CompletionTime, st.Duration, st.Webhook = nil, "", nil
	st.SuspendTime, st.SuspendedSeconds = nil, 0
	st.Message = fmt.Sprintf("retry %d: running %s again", st.Retries, strings.Join(rec.Steps, ", "))
	meta.RemoveStatusCondition(&st.Conditions, webhook.ConditionDelivered)
	conditions.SetSummary(&st.Conditions, wf.Generation, conditions.InProgress, ReasonRetried, st.Message)
	return *st
}

// maxRetryHistory is what status keeps of the retries: spec.retry's maximum.
const maxRetryHistory = 20

// suspendedMessage says what a suspended workflow is doing.
func suspendedMessage(views []stepView) string {
	msg := "suspended (spec.suspend): no step starts until it is cleared; " + runningMessage(views)
	return strings.Replace(msg, "; running: ", "; still running: ", 1)
}

// setSuspended shows the Suspended condition while the workflow is suspended.
func setSuspended(conds *[]metav1.Condition, generation int64, on bool) {
	if !on {
		meta.RemoveStatusCondition(conds, ConditionSuspended)
		return
	}
	meta.SetStatusCondition(conds, metav1.Condition{Type: ConditionSuspended, Status: metav1.ConditionTrue,
		Reason: ReasonSuspended, Message: "spec.suspend is set", ObservedGeneration: generation})
}
