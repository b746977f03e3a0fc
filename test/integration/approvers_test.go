package integration

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testenv"
)

// approverAttacks attacks the approvals and workflow-creator policies (the
// caller applied them) in ns, a namespace bound to alice in which creator
// may write Workflows: the creator, a named reviewer, a member of a named
// group and an outsider, all with update on Workflows there, decide on
// approval steps. Each attack has its honest control.
func approverAttacks(t *testing.T, env *testenv.Env, ns, creator, suffix string) {
	admin := kubernetes.NewForConfigOrDie(env.Config)
	reviewer, member, outsider, group := "reviewer-"+suffix, "member-"+suffix, "outsider-"+suffix, "reviewers-"+suffix
	for _, user := range []string{reviewer, member, outsider} {
		grantWorkflowUpdate(t, admin, ns, user)
	}
	asCreator := newSchedulerClient(t, impersonate(env.Config, creator))
	as := map[string]func() versioned.Interface{
		creator:  func() versioned.Interface { return asCreator },
		reviewer: func() versioned.Interface { return newSchedulerClient(t, impersonate(env.Config, reviewer)) },
		member:   func() versioned.Interface { return newSchedulerClient(t, impersonate(env.Config, member, group)) },
		outsider: func() versioned.Interface { return newSchedulerClient(t, impersonate(env.Config, outsider)) },
	}
	// The creator is named too: naming them does not let them decide.
	named := &schedulerv1alpha1.Approvers{Users: []string{reviewer, creator}, Groups: []string{group}}
	gated := func(name string, wfApprovers, stepApprovers *schedulerv1alpha1.Approvers) string {
		wf := validWorkflow(ns, name+"-"+suffix)
		withApproval(wf)
		wf.Spec.Approvers = wfApprovers
		wf.Spec.Steps[len(wf.Spec.Steps)-1].Approval.Approvers = stepApprovers
		wf, err := asCreator.SchedulerV1alpha1().Workflows(ns).Create(t.Context(), wf, metav1.CreateOptions{})
		require.NoError(t, err)
		assert.Equal(t, creator, wf.Annotations[labelkeys.Creator], "the creator is recorded from the create request")
		return wf.Name
	}
	decide := func(name, by string, groups ...string) error {
		c := as[by]()
		wf, err := c.SchedulerV1alpha1().Workflows(ns).Get(t.Context(), name, metav1.GetOptions{})
		require.NoError(t, err)
		a := approval(by)
		a.ByGroups = groups
		wf.Spec.Approvals = append(wf.Spec.Approvals, a)
		_, err = c.SchedulerV1alpha1().Workflows(ns).Update(t.Context(), wf, metav1.UpdateOptions{})
		return err
	}
	const (
		notApprover = " is not among the approvers of the step (spec.steps[].approval.approvers, else spec.approvers)"
		selfRefused = ") decides on its approval steps only when approvers.allowSelfApproval is set"
	)
	fourEyes := gated("four-eyes", named, nil)
	stepOwn := gated("step-own", named, &schedulerv1alpha1.Approvers{Users: []string{outsider}})
	open := gated("open", nil, nil)
	self := gated("self", &schedulerv1alpha1.Approvers{AllowSelfApproval: true}, nil)
	for _, tc := range []struct {
		name   string
		do     func() error
		denied string
	}{
		{"the creator approves their own gate", func() error { return decide(fourEyes, creator) }, "the workflow's creator (" + creator + selfRefused},
		{"the creator approves a gate that names no approvers", func() error { return decide(open, creator) }, "the workflow's creator (" + creator + selfRefused},
		{"an outsider with update on Workflows approves", func() error { return decide(fourEyes, outsider) }, outsider + notApprover},
		{"an outsider claims a group they are not in", func() error { return decide(fourEyes, outsider, group) },
			"spec.approvals[].byGroups: a new approval may name only groups its writer, " + outsider + ", is a member of"},
		{"a workflow-level approver decides a step that names its own", func() error { return decide(stepOwn, reviewer) }, reviewer + notApprover},
		{"a named reviewer approves", func() error { return decide(fourEyes, reviewer) }, ""},
		{"a member of a named group approves, naming the group", func() error { return decide(fourEyes, member, group) }, ""},
		{"the step's own approver decides", func() error { return decide(stepOwn, outsider) }, ""},
		{"anyone but the creator decides a gate that names no approvers", func() error { return decide(open, outsider) }, ""},
		{"the creator approves where self-approval is allowed", func() error { return decide(self, creator) }, ""},
		{"approvals in the create", func() error {
			wf := validWorkflow(ns, "preseeded-"+suffix)
			withApproval(wf)
			wf.Spec.Approvals = []schedulerv1alpha1.Approval{approval(creator)}
			_, err := asCreator.SchedulerV1alpha1().Workflows(ns).Create(t.Context(), wf, metav1.CreateOptions{})
			return err
		}, "spec.approvals cannot be set when the workflow is created"},
		{"the creator rewrites the recorded creator", func() error {
			wf, err := asCreator.SchedulerV1alpha1().Workflows(ns).Get(t.Context(), fourEyes, metav1.GetOptions{})
			require.NoError(t, err)
			wf.Annotations[labelkeys.Creator] = reviewer
			_, err = asCreator.SchedulerV1alpha1().Workflows(ns).Update(t.Context(), wf, metav1.UpdateOptions{})
			return err
		}, "metadata.annotations[scheduler.opsnorth.io/creator]: records who created the workflow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			if tc.denied == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsForbidden(err) || apierrors.IsInvalid(err), "refused: %v", err)
			assert.Contains(t, err.Error(), tc.denied)
		})
	}
	t.Run("a forged creator is replaced by the writer", func(t *testing.T) {
		wf := validWorkflow(ns, "forged-creator-"+suffix)
		wf.Annotations = map[string]string{labelkeys.Creator: reviewer}
		wf, err := asCreator.SchedulerV1alpha1().Workflows(ns).Create(t.Context(), wf, metav1.CreateOptions{})
		require.NoError(t, err)
		assert.Equal(t, creator, wf.Annotations[labelkeys.Creator])
	})
	t.Run("refused decisions were not stored", func(t *testing.T) {
		wf, err := asCreator.SchedulerV1alpha1().Workflows(ns).Get(t.Context(), fourEyes, metav1.GetOptions{})
		require.NoError(t, err)
		var by []string
		for _, a := range wf.Spec.Approvals {
			by = append(by, a.By)
		}
		assert.ElementsMatch(t, []string{reviewer, member}, by)
	})
}

// grantWorkflowUpdate lets user read and update Workflows in namespace.
func grantWorkflowUpdate(t *testing.T, c kubernetes.Interface, namespace, user string) {
	t.Helper()
	grantRules(t, c, namespace, user, rbacv1.PolicyRule{APIGroups: []string{"scheduler.opsnorth.io"}, Resources: []string{"workflows"},
		Verbs: []string{"get", "update", "patch"}})
}

// grantRules binds user to a Role named after them holding rules in namespace.
func grantRules(t *testing.T, c kubernetes.Interface, namespace, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	_, err := c.RbacV1().Roles(namespace).Create(t.Context(), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = c.RbacV1().RoleBindings(namespace).Create(t.Context(), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}, metav1.CreateOptions{})
	require.NoError(t, err)
}
