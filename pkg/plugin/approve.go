package plugin

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	ac "opsnorth.io/scheduler/generated/applyconfiguration/scheduler/v1alpha1"
)

func newApproveCommand(o *Options) *cobra.Command {
	var comment string
	var reject bool
	cmd := &cobra.Command{
		Use:   "approve WORKFLOW STEP",
		Short: "Approve (or with --reject, reject) an approval step that is waiting",
		Long: "approve adds your decision to the workflow's spec.approvals, for the current run\n" +
			"(status.retries), signed with your username as the API server knows you. It is written with\n" +
			"server-side apply by the field manager " + FieldManager + ", which owns only the entries it\n" +
			"added. A step that is not an approval step, not waiting, or already decided is refused.",
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

func (o *Options) approve(ctx context.Context, c *clients, wfName, stepName string, decision v1alpha1.ApprovalDecision, comment string) error {
	obj, err := fetch(ctx, c, workflowResource, wfName)
	if err != nil {
		return err
	}
	wf := obj.(*v1alpha1.Workflow)
	if err := approvable(wf, stepName); err != nil {
		return err
	}
	user, err := whoAmI(ctx, c)
	if err != nil {
		return err
	}
	entry := ac.Approval().WithStep(stepName).WithRetry(wf.Status.Retries).WithDecision(decision).WithBy(user)
	if comment != "" {
		entry.WithComment(comment)
	}
	// Apply what this field manager applied before plus the new entry: an
	// entry left out of an apply would be removed.
	owned, err := ac.ExtractWorkflow(wf, FieldManager)
	if err != nil {
		return fmt.Errorf("read the approvals %s applied to workflow %s: %w", FieldManager, wfName, err)
	}
	approvals := []*ac.ApprovalApplyConfiguration{}
	if owned.Spec != nil {
		for i := range owned.Spec.Approvals {
			approvals = append(approvals, &owned.Spec.Approvals[i])
		}
	}
	apply := ac.Workflow(wf.Name, wf.Namespace).WithSpec(ac.WorkflowSpec().WithApprovals(append(approvals, entry)...))
	if _, err := c.scheduler().Workflows(wf.Namespace).Apply(ctx, apply, metav1.ApplyOptions{FieldManager: FieldManager}); err != nil {
		return fmt.Errorf("write the decision on step %s of workflow %s: %w", stepName, wfName, err)
	}
	verb := "approved"
	if decision == v1alpha1.DecisionReject {
		verb = "rejected"
	}
	_, err = fmt.Fprintf(o.Out, "workflow %s: step %s %s by %s\n", wfName, stepName, verb, user)
	return err
}

// approvable refuses, before any write, a step that is not an approval
// step, is not waiting, or already has a decision in this run.
func approvable(wf *v1alpha1.Workflow, stepName string) error {
	step, st, err := findStep(wf, stepName)
	if err != nil {
		return err
	}
	if step.Approval == nil {
		return fmt.Errorf("step %s of workflow %s is not an approval step: only steps with approval set wait for a decision", stepName, wf.Name)
	}
	for _, a := range wf.Spec.Approvals {
		if a.Step == stepName && a.Retry == wf.Status.Retries {
			return fmt.Errorf("step %s of workflow %s already has a decision in this run: %s by %s", stepName, wf.Name, a.Decision, a.By)
		}
	}
	if st == nil || st.Phase != v1alpha1.StepWaiting {
		return fmt.Errorf("step %s of workflow %s is not waiting for approval (phase %s)", stepName, wf.Name, phaseOr(st))
	}
	return nil
}

// whoAmI is the username the API server authenticates the caller as
// (kubectl auth whoami).
func whoAmI(ctx context.Context, c *clients) (string, error) {
	review, err := c.kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("find your username (SelfSubjectReview): %w", err)
	}
	if review.Status.UserInfo.Username == "" {
		return "", fmt.Errorf("the API server does not know your username")
	}
	return review.Status.UserInfo.Username, nil
}
