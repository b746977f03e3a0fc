package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// TestApproverRules are the rules the manager applies to decisions where
// the approvals policy is not installed; the integration suite proves the
// policy refuses the same ones at admission.
func TestApproverRules(t *testing.T) {
	named := &v1alpha1.Approvers{Users: []string{"rev", "cat"}, Groups: []string{"leads"}}
	tests := []struct {
		name        string
		creator     string
		wf, step    *v1alpha1.Approvers
		decision    v1alpha1.Approval
		wantRefusal string
	}{
		{name: "no approvers, not the creator", creator: "cat", decision: v1alpha1.Approval{By: "ann"}},
		{name: "no approvers, the creator", creator: "cat", decision: v1alpha1.Approval{By: "cat"},
			wantRefusal: "cat created the workflow and may not decide on its approval steps (spec.approvers.allowSelfApproval is not set)"},
		{name: "no approvers, creator not recorded", decision: v1alpha1.Approval{By: "cat"}},
		{name: "a named user", creator: "cat", wf: named, decision: v1alpha1.Approval{By: "rev"}},
		{name: "a member of a named group", creator: "cat", wf: named, decision: v1alpha1.Approval{By: "ann", ByGroups: []string{"ops", "leads"}}},
		{name: "not named", creator: "cat", wf: named, decision: v1alpha1.Approval{By: "ann", ByGroups: []string{"ops"}},
			wantRefusal: "ann is not among the approvers (spec.approvers)"},
		{name: "the creator, named", creator: "cat", wf: named, decision: v1alpha1.Approval{By: "cat"},
			wantRefusal: "cat created the workflow and may not decide on its approval steps (spec.approvers.allowSelfApproval is not set)"},
		{name: "the creator, self-approval allowed", creator: "cat", wf: &v1alpha1.Approvers{Users: []string{"cat"}, AllowSelfApproval: true},
			decision: v1alpha1.Approval{By: "cat"}},
		{name: "named, creator not recorded", wf: named, decision: v1alpha1.Approval{By: "rev"},
			wantRefusal: "the workflow's creator is not recorded (annotation scheduler.opsnorth.io/creator), so self-approval cannot be ruled out (spec.approvers.allowSelfApproval is not set)"},
		{name: "the step's approvers replace the workflow's", creator: "cat", wf: named, step: &v1alpha1.Approvers{Users: []string{"ann"}},
			decision: v1alpha1.Approval{By: "rev"}, wantRefusal: "rev is not among the approvers (spec.steps[1].approval.approvers)"},
		{name: "the step's own approver", creator: "cat", wf: named, step: &v1alpha1.Approvers{Users: []string{"ann"}},
			decision: v1alpha1.Approval{By: "ann"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wf := makeWorkflow("wf").step("a", nil).obj()
			wf.Spec.Steps = append(wf.Spec.Steps, v1alpha1.WorkflowStep{Name: "gate", Approval: &v1alpha1.ApprovalGate{Approvers: tt.step}})
			wf.Spec.Approvers = tt.wf
			if tt.creator != "" {
				wf.Annotations = map[string]string{labelkeys.Creator: tt.creator}
			}
			tt.decision.Step = "gate"
			assert.Equal(t, tt.wantRefusal, refuseDecision(wf, 1, &tt.decision))
		})
	}
}

// TestRefusedDecisionKeepsWaiting: a decision that does not count leaves
// the step waiting, says why in the step's reason and the workflow's
// message, and the next one that counts decides.
func TestRefusedDecisionKeepsWaiting(t *testing.T) {
	wf := makeWorkflow("wf").step("a", nil).started().obj()
	wf.Annotations = map[string]string{labelkeys.Creator: "cat"}
	wf.Spec.Approvers = &v1alpha1.Approvers{Users: []string{"rev"}}
	wf.Spec.Steps = append(wf.Spec.Steps, v1alpha1.WorkflowStep{Name: "gate", Approval: &v1alpha1.ApprovalGate{}})
	a := task(wf, "a", 0, v1alpha1.TaskSucceeded, nil)
	wf.Status = decide(observe(wf, t0.Add(20*time.Second), a)).status

	wf.Spec.Approvals = []v1alpha1.Approval{{Step: "gate", By: "mallory"}}
	p := decide(observe(wf, t0.Add(30*time.Second), a))
	gate := p.status.StepStatuses[1]
	assert.Equal(t, v1alpha1.StepWaiting, gate.Phase)
	assert.Equal(t, ReasonApprovalRefused, gate.Reason)
	assert.Contains(t, p.status.Message, "gate: the decision of mallory does not count: mallory is not among the approvers (spec.approvers)")

	wf.Status = p.status
	wf.Spec.Approvals = append(wf.Spec.Approvals, v1alpha1.Approval{Step: "gate", By: "rev", Comment: "ok"})
	p = decide(observe(wf, t0.Add(40*time.Second), a))
	gate = p.status.StepStatuses[1]
	assert.Equal(t, v1alpha1.StepSucceeded, gate.Phase)
	assert.Equal(t, "approved by rev", gate.Message)
	assert.Equal(t, "rev", gate.Output[OutputApprover])
}
