package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func newApproveCommand(o *Options) *cobra.Command {
	var comment string
	var reject bool
	cmd := &cobra.Command{
		Use:   "approve WORKFLOW STEP",
		Short: "Approve (or with --reject, reject) an approval step that is waiting",
		Long: "approve appends your decision to the workflow's spec.approvals, for the current run\n" +
			"(status.retries), signed with your username as the API server knows you, with a JSON patch\n" +
			"that only adds (field manager " + FieldManager + "). A step that is not an approval step, not\n" +
			"waiting, or already decided is refused; so is a second decision that races yours.",
		Example: "  kubectl opsnorth approve research-report review --comment 'sources checked'\n" +
			"  kubectl opsnorth approve research-report review --reject --comment 'wrong sources'",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.connect()
			if err != nil {
				return err
			}
			decision := v1alpha1.DecisionApprove
			if reject {
				decision = v1alpha1.DecisionReject
			}
			return o.approve(cmd.Context(), c, args[0], args[1], decision, comment)
		},
	}
	cmd.Flags().StringVar(&comment, "comment", "", "a comment, passed to later steps as the step's output \"comment\"")
	cmd.Flags().BoolVar(&reject, "reject", false, "reject instead: the step fails with reason Rejected")
	return cmd
}

// maxApproveAttempts bounds the writes of one decision that status writes race.
const maxApproveAttempts = 5

func (o *Options) approve(ctx context.Context, c *clients, wfName, stepName string, decision v1alpha1.ApprovalDecision, comment string) error {
	var user, read string
	var groups []string
	var failed error
	for attempt := 1; ; attempt++ {
		obj, err := fetch(ctx, c, workflowResource, wfName)
		if err != nil {
			return err
		}
		wf := obj.(*v1alpha1.Workflow)
		if failed != nil && (wf.ResourceVersion == read || attempt > maxApproveAttempts) {
			// Nothing changed since the write failed: it failed for itself.
			return fmt.Errorf("write the decision on step %s of workflow %s: %w", stepName, wfName, failed)
		}
		if user == "" {
			if user, groups, err = whoAmI(ctx, c); err != nil {
				return err
			}
		}
		i, err := approvable(wf, stepName, user)
		if err != nil {
			return err
		}
		entry := v1alpha1.Approval{Step: stepName, Retry: wf.Status.Retries, Decision: decision, By: user, Comment: comment,
			ByGroups: approverGroups(wf, i, groups)}
		patch, err := appendApproval(wf, entry)
		if err != nil {
			return err
		}
		if o.beforeWrite != nil {
			o.beforeWrite()
		}
		_, failed = c.scheduler().Workflows(wf.Namespace).Patch(ctx, wf.Name, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		if failed == nil {
			break
		}
		// The first decision is tested against the version read, which a
		// status write of the manager may have replaced: read again.
		read = wf.ResourceVersion
	}
	verb := "approved"
	if decision == v1alpha1.DecisionReject {
		verb = "rejected"
	}
	_, err := fmt.Fprintf(o.Out, "workflow %s: step %s %s by %s\n", wfName, stepName, verb, user)
	return err
}

// appendApproval is a JSON patch that appends entry to spec.approvals. It
// never replaces a decision: the first one creates the list only while it
// is still absent (the test), and the CRD refuses a second decision by the
// same writer on the same step and run.
func appendApproval(wf *v1alpha1.Workflow, entry v1alpha1.Approval) ([]byte, error) {
	ops := []map[string]any{{"op": "add", "path": "/spec/approvals/-", "value": entry}}
	if len(wf.Spec.Approvals) == 0 {
		ops = []map[string]any{
			{"op": "test", "path": "/metadata/resourceVersion", "value": wf.ResourceVersion},
			{"op": "add", "path": "/spec/approvals", "value": []v1alpha1.Approval{entry}},
		}
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("encode the approval: %w", err)
	}
	return patch, nil
}

// approvable is the index of step stepName; it refuses, before any write,
// a step that is not an approval step, is not waiting, or that user
// already decided on in this run.
func approvable(wf *v1alpha1.Workflow, stepName, user string) (int, error) {
	step, st, err := findStep(wf, stepName)
	if err != nil {
		return 0, err
	}
	if step.Approval == nil {
		return 0, fmt.Errorf("step %s of workflow %s is not an approval step: only steps with approval set wait for a decision", stepName, wf.Name)
	}
	for _, a := range wf.Spec.Approvals {
		if a.Step == stepName && a.Retry == wf.Status.Retries && a.By == user {
			return 0, fmt.Errorf("step %s of workflow %s already has your decision in this run: %s by %s", stepName, wf.Name, a.Decision, a.By)
		}
	}
	if st == nil || st.Phase != v1alpha1.StepWaiting {
		return 0, fmt.Errorf("step %s of workflow %s is not waiting for approval (phase %s)", stepName, wf.Name, phaseOr(st))
	}
	return slices.IndexFunc(wf.Spec.Steps, func(s v1alpha1.WorkflowStep) bool { return s.Name == stepName }), nil
}

// approverGroups are the groups of the caller that the approvers of step i
// name: what the decision records in byGroups, and no more.
func approverGroups(wf *v1alpha1.Workflow, i int, groups []string) []string {
	p, _ := wf.StepApprovers(i)
	if p == nil {
		return nil
	}
	var out []string
	for _, g := range groups {
		if slices.Contains(p.Groups, g) && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// whoAmI is the username the API server authenticates the caller as
// (kubectl auth whoami).
func whoAmI(ctx context.Context, c *clients) (string, []string, error) {
	review, err := c.kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", nil, fmt.Errorf("find your username (SelfSubjectReview): %w", err)
	}
	if review.Status.UserInfo.Username == "" {
		return "", nil, fmt.Errorf("the API server does not know your username")
	}
	return review.Status.UserInfo.Username, review.Status.UserInfo.Groups, nil
}
