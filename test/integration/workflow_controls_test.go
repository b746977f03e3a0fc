package integration

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testenv"
)

// controlAttacks attacks the workflow-controls policy (the caller applied
// it) in ns, a backend namespace in which creator may write Workflows: a
// colleague with update on every Workflow there stops, suspends, retries
// and approves another user's run; the creator, the user, an operator
// granted that user, a wildcard namespace admin and a named approver show
// the honest paths. Every write is a dry run, so each case sees the same
// workflow.
func controlAttacks(t *testing.T, env *testenv.Env, ns, creator, suffix string) {
	admin := kubernetes.NewForConfigOrDie(env.Config)
	carol, colleague, operator, stranger, nsAdmin, reviewer := "carol-"+suffix, "colleague-"+suffix, "operator-"+suffix,
		"stranger-"+suffix, "nsadmin-"+suffix, "reviewer-"+suffix
	for _, user := range []string{carol, colleague, reviewer} {
		grantWorkflowUpdate(t, admin, ns, user)
	}
	grantControl(t, admin, ns, operator, carol)
	grantControl(t, admin, ns, stranger, "alice")
	grantControl(t, admin, ns, nsAdmin, "") // a wildcard namespace admin
	asCreator := newSchedulerClient(t, impersonate(env.Config, creator))
	newWF := func(name string, approvers *schedulerv1alpha1.Approvers) *schedulerv1alpha1.Workflow {
		wf := validWorkflow(ns, name+"-"+suffix)
		wf.Spec.UserID = carol
		withApproval(wf)
		wf.Spec.Steps[len(wf.Spec.Steps)-1].Approval.Approvers = approvers
		wf, err := asCreator.SchedulerV1alpha1().Workflows(ns).Create(t.Context(), wf, metav1.CreateOptions{})
		require.NoError(t, err)
		return wf
	}
	open := newWF("carols-open", nil)
	// A retry is valid only on a Failed workflow (the CRD checks it first).
	open.Status.Phase = schedulerv1alpha1.WorkflowFailed
	open, err := newSchedulerClient(t, env.Config).SchedulerV1alpha1().Workflows(ns).UpdateStatus(t.Context(), open, metav1.UpdateOptions{})
	require.NoError(t, err)
	named := newWF("carols-named", &schedulerv1alpha1.Approvers{Users: []string{colleague, reviewer}})
	stop := func(wf *schedulerv1alpha1.Workflow) { wf.Spec.Stop = true }
	suspend := func(wf *schedulerv1alpha1.Workflow) { wf.Spec.Suspend = true }
	retry := func(wf *schedulerv1alpha1.Workflow) { wf.Spec.Retry = 1 }
	approve := func(by string) func(*schedulerv1alpha1.Workflow) {
		return func(wf *schedulerv1alpha1.Workflow) { wf.Spec.Approvals = append(wf.Spec.Approvals, approval(by)) }
	}
	hold := func(wf *schedulerv1alpha1.Workflow) { wf.Finalizers = append(wf.Finalizers, "example.com/hold") }
	refusal := func(writer string) string {
		return writer + ` does not act for user "` + carol + `" in backend namespace ` + ns + ": only the workflow's creator (" + creator +
			"), the user, or an identity allowed verb control on users.scheduler.opsnorth.io/" + carol + " there may"
	}
	dryRun := metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}
	asColleague := newSchedulerClient(t, impersonate(env.Config, colleague))
	require.Eventually(t, func() bool { // a policy takes effect a moment after it is created
		wf := open.DeepCopy()
		stop(wf)
		_, err := asColleague.SchedulerV1alpha1().Workflows(ns).Update(t.Context(), wf, dryRun)
		return apierrors.IsForbidden(err)
	}, time.Minute, 200*time.Millisecond, "the workflow-controls policy never took effect")
	for _, tc := range []struct {
		name   string
		writer string
		wf     *schedulerv1alpha1.Workflow
		change func(*schedulerv1alpha1.Workflow)
		denied string // empty: admitted
	}{
		{"a colleague stops another user's workflow", colleague, open, stop, "spec.stop, spec.suspend, spec.retry: " + refusal(colleague) + " change them"},
		{"a colleague suspends it", colleague, open, suspend, refusal(colleague)},
		{"a colleague retries it", colleague, open, retry, refusal(colleague)},
		{"a colleague approves a gate that names no approvers", colleague, open, approve(colleague),
			"spec.approvals: " + refusal(colleague) + " decide when the step names no approvers"},
		{"an operator granted another user stops it", stranger, open, stop, refusal(stranger)},
		{"a colleague's update that keeps the spec", colleague, open, hold, ""},
		{"the creator stops it", creator, open, stop, ""},
		{"the user suspends their own workflow", carol, open, suspend, ""},
		{"the user approves their own gate", carol, open, approve(carol), ""},
		{"an operator granted the user retries it", operator, open, retry, ""},
		{"a wildcard namespace admin stops it", nsAdmin, open, stop, ""},
		{"a named approver decides", colleague, named, approve(colleague), ""},
		{"a named approver still may not stop it", colleague, named, stop, refusal(colleague)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newSchedulerClient(t, impersonate(env.Config, tc.writer))
			wf := tc.wf.DeepCopy()
			tc.change(wf)
			_, err := c.SchedulerV1alpha1().Workflows(ns).Update(t.Context(), wf, dryRun)
			if tc.denied == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsForbidden(err), "refused: %v", err)
			assert.Contains(t, err.Error(), tc.denied)
		})
	}
}

// grantControl lets user read and update Workflows in namespace and act for
// the user named forUser there (the virtual verb control on
// users.scheduler.opsnorth.io); an empty forUser grants every verb on
// every resource, as a wildcard namespace admin Role does.
func grantControl(t *testing.T, c kubernetes.Interface, namespace, user, forUser string) {
	t.Helper()
	rules := []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}
	if forUser != "" {
		rules = []rbacv1.PolicyRule{
			{APIGroups: []string{"scheduler.opsnorth.io"}, Resources: []string{"workflows"}, Verbs: []string{"get", "update", "patch"}},
			{APIGroups: []string{"scheduler.opsnorth.io"}, Resources: []string{"users"}, ResourceNames: []string{forUser}, Verbs: []string{"control"}},
		}
	}
	grantRules(t, c, namespace, user, rules...)
}
