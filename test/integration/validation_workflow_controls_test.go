package integration

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// workflowControls are the WorkflowSpec fields a person may change on a
// created Workflow; every other field is immutable.
var workflowControls = map[string]bool{"suspend": true, "stop": true, "retry": true, "approvals": true}

// withApproval makes the workflow's last step ("report") an approval step.
func withApproval(w *workflow) {
	last := &w.Spec.Steps[len(w.Spec.Steps)-1]
	*last = schedulerv1alpha1.WorkflowStep{Name: last.Name, DependsOn: last.DependsOn,
		Approval: &schedulerv1alpha1.ApprovalGate{Message: "ship ${steps.analyze.output.summary}?"}}
}

func approval(by string) schedulerv1alpha1.Approval {
	return schedulerv1alpha1.Approval{Step: "report", By: by, Decision: schedulerv1alpha1.DecisionApprove}
}

// invalidWorkflowControlCases break one rule of approval steps and of the
// control fields each.
func invalidWorkflowControlCases() []invalidCase {
	return []invalidCase{
		{
			name:  "workflow step with image and approval",
			obj:   newWorkflow(func(w *workflow) { withApproval(w); w.Spec.Steps[2].Image = "ghcr.io/opsnorth/agents/report:1.0.0" }),
			field: "spec.steps[2]", msg: "a step sets either image (an agent step) or approval (an approval step)",
		},
		{
			name:  "workflow approval step with a command",
			obj:   newWorkflow(func(w *workflow) { withApproval(w); w.Spec.Steps[2].Command = []string{"/agent"} }),
			field: "spec.steps[2]", msg: "an approval step runs no agent",
		},
		{
			name:  "workflow approval onTimeout unknown",
			obj:   newWorkflow(func(w *workflow) { withApproval(w); w.Spec.Steps[2].Approval.OnTimeout = "Approve" }),
			field: "spec.steps[2].approval.onTimeout", msg: "Unsupported value",
		},
		{
			name:  "workflow approval in the create",
			obj:   newWorkflow(func(w *workflow) { withApproval(w); w.Spec.Approvals = []schedulerv1alpha1.Approval{approval("alice")} }),
			field: "spec.approvals", msg: "spec.approvals cannot be set when the workflow is created",
		},
		{
			name:   "workflow approval of an agent step",
			obj:    newWorkflow(withApproval),
			update: as(func(w *workflow) { w.Spec.Approvals = []schedulerv1alpha1.Approval{{Step: "fetch", By: "alice"}} }),
			field:  "spec.approvals", msg: "spec.approvals[].step must name an approval step of this workflow",
		},
		{
			name:   "workflow approval without by",
			obj:    newWorkflow(withApproval),
			update: as(func(w *workflow) { w.Spec.Approvals = []schedulerv1alpha1.Approval{approval("")} }),
			field:  "spec.approvals[0].by", msg: "should be at least 1 chars long",
		},
		{
			name:   "workflow approvers changed",
			obj:    newWorkflow(func(w *workflow) { w.Spec.Approvers = &schedulerv1alpha1.Approvers{Users: []string{"bob"}} }),
			update: as(func(w *workflow) { w.Spec.Approvers.Users = []string{"mallory"} }),
			field:  "spec", msg: "spec is immutable apart from suspend, stop, retry and approvals",
		},
		{
			name:  "workflow approvers listing a user twice",
			obj:   newWorkflow(func(w *workflow) { w.Spec.Approvers = &schedulerv1alpha1.Approvers{Users: []string{"bob", "bob"}} }),
			field: "spec.approvers.users[1]", msg: "Duplicate value",
		},
		{
			name:   "workflow step image changed",
			obj:    newWorkflow(nil),
			update: as(func(w *workflow) { w.Spec.Steps[0].Image = "ghcr.io/opsnorth/agents/fetch:2.0.0" }),
			field:  "spec", msg: "spec is immutable apart from suspend, stop, retry and approvals",
		},
		{
			name:   "workflow timeout added",
			obj:    newWorkflow(func(w *workflow) { w.Spec.TimeoutSeconds = nil }),
			update: as(func(w *workflow) { w.Spec.TimeoutSeconds = ptr.To[int64](60) }),
			field:  "spec", msg: "spec is immutable apart from suspend, stop, retry and approvals",
		},
		{
			name:   "workflow retry raised by two",
			obj:    newWorkflow(nil),
			update: as(func(w *workflow) { w.Spec.Retry = 2 }),
			field:  objectRoot, msg: "spec.retry: raise it by one, with spec.stop clear, to retry a Failed workflow",
		},
		{
			name:   "workflow retry of a workflow that has not failed",
			obj:    newWorkflow(nil),
			update: as(func(w *workflow) { w.Spec.Retry = 1 }),
			field:  objectRoot, msg: "spec.retry: raise it by one, with spec.stop clear, to retry a Failed workflow",
		},
		{
			name:   "workflow retry while stopped",
			obj:    newWorkflow(func(w *workflow) { w.Spec.Stop = true }),
			update: as(func(w *workflow) { w.Spec.Retry = 1 }),
			field:  objectRoot, msg: "spec.retry: raise it by one, with spec.stop clear, to retry a Failed workflow",
		},
		{
			name:   "workflow approval withdrawn",
			obj:    newWorkflow(withApproval),
			before: as(func(w *workflow) { w.Spec.Approvals = []schedulerv1alpha1.Approval{approval("alice")} }),
			update: as(func(w *workflow) { w.Spec.Approvals = nil }),
			field:  "spec.approvals", msg: "spec.approvals can only be added to",
		},
		{
			name:   "workflow approval rewritten",
			obj:    newWorkflow(withApproval),
			before: as(func(w *workflow) { w.Spec.Approvals = []schedulerv1alpha1.Approval{approval("alice")} }),
			update: as(func(w *workflow) { w.Spec.Approvals[0].By = "mallory" }),
			field:  "spec.approvals", msg: "spec.approvals can only be added to",
		},
	}
}

// workflowControlUpdates are the spec changes a created Workflow accepts.
func workflowControlUpdates() []mutableCase {
	return []mutableCase{
		{name: "workflow suspended", obj: newWorkflow(nil), update: as(func(w *workflow) { w.Spec.Suspend = true })},
		{name: "workflow stopped", obj: newWorkflow(nil), update: as(func(w *workflow) { w.Spec.Stop = true })},
		{
			name:   "workflow approved",
			obj:    newWorkflow(withApproval),
			update: as(func(w *workflow) { w.Spec.Approvals = append(w.Spec.Approvals, approval("alice")) }),
		},
		{
			name:   "workflow step decided by a second person",
			obj:    newWorkflow(withApproval),
			before: as(func(w *workflow) { w.Spec.Approvals = append(w.Spec.Approvals, approval("alice")) }),
			update: as(func(w *workflow) { w.Spec.Approvals = append(w.Spec.Approvals, approval("bob")) }),
		},
	}
}

// TestWorkflowImmutability fails when a WorkflowSpec field is neither a
// control nor named by the immutability rule.
func TestWorkflowImmutability(t *testing.T) {
	rule := immutabilityRule(t, "scheduler.opsnorth.io_workflows.yaml")
	for _, field := range jsonFields(reflect.TypeFor[schedulerv1alpha1.WorkflowSpec]()) {
		if workflowControls[field] {
			assert.NotContains(t, rule, "self."+field+" ==", "spec.%s is a control and must stay mutable", field)
			continue
		}
		assert.Contains(t, rule, "self."+field+" == oldSelf."+field, "spec.%s is missing from the immutability rule", field)
	}
}
