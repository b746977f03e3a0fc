package workflows

import (
	"errors"
	"fmt"
	"time"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/workflows/subst"
)

// Approval step reasons.
const (
	ReasonAwaitingApproval = "AwaitingApproval"
	ReasonApproved         = "Approved"
	ReasonRejected         = "Rejected"
	ReasonApprovalTimeout  = "ApprovalTimeout"
)

// Output keys of an approval step.
const (
	OutputDecision   = "decision"
	OutputApprover   = "approver"
	OutputComment    = "comment"
	OutputApprovedAt = "approvedAt"
)

// maxApprovalMessage bounds an approval step's expanded message in status.
const maxApprovalMessage = 4096

// observeApproval derives approval step i's status: Pending until it may
// start, then Waiting until a decision of the current run in spec.approvals,
// or its timeout, ends it. A finished approval step stays as it ended.
func observeApproval(obs *observation, i int, prev *v1alpha1.StepStatus) stepView {
	step := obs.wf.Spec.Steps[i]
	if prev == nil || prev.Phase == v1alpha1.StepPending || prev.Phase == "" {
		v := stepView{status: v1alpha1.StepStatus{Name: step.Name, Phase: v1alpha1.StepPending}}
		if prev != nil {
			v.status.Attempts, v.status.FirstAttempt = prev.Attempts, prev.FirstAttempt
		}
		return v
	}
	v := stepView{status: *prev.DeepCopy(), reason: prev.Reason}
	if prev.Phase != v1alpha1.StepWaiting {
		return v
	}
	gate := step.Approval
	a, refused := decision(obs.wf, i)
	v.status.Reason = ReasonAwaitingApproval
	if refused != "" {
		v.status.Reason, v.refused = ReasonApprovalRefused, refused
	}
	if a != nil {
		v.status.Approval = &v1alpha1.ApprovalRecord{Decision: a.Decision, By: a.By, Comment: a.Comment, Time: stamp(obs.now)}
		if a.Decision == v1alpha1.DecisionReject {
			msg := "rejected by " + a.By
			if a.Comment != "" {
				msg += ": " + a.Comment
			}
			return v.fail(obs, nil, ReasonRejected, msg)
		}
		v.status.Phase, v.status.Reason = v1alpha1.StepSucceeded, ReasonApproved
		v.status.Message = "approved by " + a.By
		v.status.CompletionTime = new(stamp(obs.now))
		v.status.Output = map[string]string{
			OutputDecision: "approved", OutputApprover: a.By, OutputComment: a.Comment,
			OutputApprovedAt: stamp(obs.now).Format(time.RFC3339),
		}
		return v
	}
	if gate.TimeoutSeconds == nil {
		return v
	}
	// startTime has whole-second precision: count from the end of its second.
	v.retryAt = prev.StartTime.Add(time.Second + time.Duration(*gate.TimeoutSeconds)*time.Second)
	if obs.now.Before(v.retryAt) {
		return v
	}
	msg := fmt.Sprintf("no decision within %ds", *gate.TimeoutSeconds)
	if gate.OnTimeout == v1alpha1.ApprovalTimeoutSkip {
		v.status.Phase, v.status.Reason, v.status.Message = v1alpha1.StepSkipped, ReasonApprovalTimeout, msg+": skipped"
		v.status.CompletionTime = new(stamp(obs.now))
		v.status.Output = map[string]string{OutputDecision: "skipped"}
		v.retryAt = time.Time{}
		return v
	}
	return v.fail(obs, nil, ReasonApprovalTimeout, msg)
}

// wait starts approval step i waiting: its message is expanded from the
// outputs it may read.
func wait(obs *observation, views []stepView, i int) error {
	gate := obs.wf.Spec.Steps[i].Approval
	msg, err := subst.Expand(gate.Message, resolver(obs, views), maxApprovalMessage)
	if err != nil && !errors.Is(err, subst.ErrTooLarge) {
		return fmt.Errorf("approval message: %w", err)
	}
	v := &views[i]
	v.status.Phase, v.status.Reason = v1alpha1.StepWaiting, ReasonAwaitingApproval
	v.status.StartTime = new(stamp(obs.now))
	v.status.Message = conditions.Truncate(msg, maxApprovalMessage)
	if v.status.Message == "" {
		v.status.Message = "waiting for approval"
	}
	if gate.TimeoutSeconds != nil {
		v.retryAt = v.status.StartTime.Add(time.Second + time.Duration(*gate.TimeoutSeconds)*time.Second)
	}
	return nil
}

// done reports whether a step lets the steps that depend on it start: it
// succeeded, or it is an approval step its timeout skipped.
func done(s v1alpha1.StepStatus) bool {
	return s.Phase == v1alpha1.StepSucceeded || (s.Phase == v1alpha1.StepSkipped && s.Reason == ReasonApprovalTimeout)
}
