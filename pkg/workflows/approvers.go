package workflows

import (
	"fmt"
	"slices"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// ReasonApprovalRefused is the reason of a waiting approval step whose
// latest decision of the run does not count (refuseDecision).
const ReasonApprovalRefused = "ApprovalRefused"

// refuseDecision is why decision a on approval step i may not count, or ""
// when it may. It applies the rules the opsnorth-scheduler-approvals policy
// applies at admission, to what the object records, so a gate holds where
// that policy is not installed: a named approver (a user, or a group the
// decision names in byGroups) decides, never the workflow's creator unless
// allowSelfApproval is set, and with approvers named a workflow whose
// creator is not recorded takes no decision. A decision made in the create
// never reaches here: the CRD refuses spec.approvals on create.
func refuseDecision(wf *v1alpha1.Workflow, i int, a *v1alpha1.Approval) string {
	p, field := wf.StepApprovers(i)
	creator := wf.Annotations[labelkeys.Creator]
	selfOK := p != nil && p.AllowSelfApproval
	named := p != nil && (len(p.Users) > 0 || len(p.Groups) > 0)
	switch {
	case named && !slices.Contains(p.Users, a.By) && !slices.ContainsFunc(a.ByGroups, func(g string) bool { return slices.Contains(p.Groups, g) }):
		return fmt.Sprintf("%s is not among the approvers (%s)", a.By, field)
	case selfOK:
		return ""
	case creator != "" && creator == a.By:
		return fmt.Sprintf("%s created the workflow and may not decide on its approval steps (%s.allowSelfApproval is not set)", a.By, field)
	case creator == "" && named:
		return fmt.Sprintf("the workflow's creator is not recorded (annotation %s), so self-approval cannot be ruled out (%s.allowSelfApproval is not set)", labelkeys.Creator, field)
	}
	return ""
}

// decision is the first decision on approval step i in spec.approvals for
// the workflow's current run that may count, and why the last one of that
// run that may not was refused.
func decision(wf *v1alpha1.Workflow, i int) (*v1alpha1.Approval, string) {
	var refused string
	for j := range wf.Spec.Approvals {
		a := &wf.Spec.Approvals[j]
		if a.Step != wf.Spec.Steps[i].Name || a.Retry != wf.Status.Retries {
			continue
		}
		why := refuseDecision(wf, i, a)
		if why == "" {
			return a, ""
		}
		refused = fmt.Sprintf("the decision of %s does not count: %s", a.By, why)
	}
	return nil, refused
}
