package v1alpha1

import "fmt"

// StepApprovers is who may decide on step i, and the field that says so:
// the step's own approval.approvers, else the workflow's spec.approvers;
// nil when neither is set.
func (w *Workflow) StepApprovers(i int) (*Approvers, string) {
	if gate := w.Spec.Steps[i].Approval; gate != nil && gate.Approvers != nil {
		return gate.Approvers, fmt.Sprintf("spec.steps[%d].approval.approvers", i)
	}
	return w.Spec.Approvers, "spec.approvers"
}
