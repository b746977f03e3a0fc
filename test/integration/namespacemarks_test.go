package integration

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testenv"
)

const (
	markRefused    = "metadata: only the deployments manager may set the marks it recognises its namespaces by"
	bindingRefused = "metadata: setting, changing or removing labels scheduler.opsnorth.io/tenant, scheduler.opsnorth.io/backend or annotation"
)

// namespaceMarkAttacks attacks the namespace-marks policy (applied by the
// caller with the rest): a user who may create namespaces, and a namespace
// admin holding a wildcard Role in their own namespace (which lets them
// update that Namespace object), try to forge the deployments manager's
// marks and the tenancy labels. Each attack has its honest control.
func namespaceMarkAttacks(t *testing.T, env *testenv.Env, suffix string) {
	admin := kubernetes.NewForConfigOrDie(env.Config)
	team, maker, nsAdmin, binder := "owned-"+suffix, "maker-"+suffix, "nsadmin-"+suffix, "binder-"+suffix
	_, err := admin.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}}, metav1.CreateOptions{})
	require.NoError(t, err)
	grantClusterRule(t, admin, maker, maker, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"create"}})
	grantWildcardRole(t, admin, team, nsAdmin)
	grantClusterRule(t, admin, binder+"-create", binder, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"create"}})
	grantClusterRule(t, admin, binder, binder, rbacv1.PolicyRule{APIGroups: []string{"scheduler.opsnorth.io"}, Resources: []string{"namespacebindings"}, Verbs: []string{"bind"}})
	asMaker := kubernetes.NewForConfigOrDie(impersonate(env.Config, maker))
	asNSAdmin := kubernetes.NewForConfigOrDie(impersonate(env.Config, nsAdmin))
	asBinder := kubernetes.NewForConfigOrDie(impersonate(env.Config, binder))
	asDeployments := kubernetes.NewForConfigOrDie(impersonate(env.Config, deploymentsSA, "system:masters"))

	newNS := func(name string, labels, annotations map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + suffix, Labels: labels, Annotations: annotations}}
	}
	createdBy := map[string]string{"scheduler.opsnorth.io/created-by": "opsnorth-scheduler-deployments"}
	edit := func(c kubernetes.Interface, mutate func(ns *corev1.Namespace)) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			ns, err := c.CoreV1().Namespaces().Get(ctx, team, metav1.GetOptions{})
			if err != nil {
				return err
			}
			mutate(ns)
			_, err = c.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}
	}
	create := func(c kubernetes.Interface, ns *corev1.Namespace) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
			return err
		}
	}
	for _, tc := range []struct {
		name   string
		do     func(ctx context.Context) error
		denied string
	}{
		{"a namespace maker forges the manager's created-by mark on another user's namespace",
			create(asMaker, newNS("user-victim", nil, createdBy)), markRefused},
		{"a namespace maker forges the manager's restore record",
			create(asMaker, newNS("restore", nil, map[string]string{"scheduler.opsnorth.io/restore-labels": "{}"})), markRefused},
		{"a namespace maker forges the manager's user label",
			create(asMaker, newNS("user-label", map[string]string{labelkeys.User: "bob"}, nil)), markRefused},
		{"the deployments manager sets its marks", create(asDeployments,
			newNS("user-made", map[string]string{labelkeys.User: "bob"}, createdBy)), ""},
		{"a namespace maker binds a namespace to another user",
			create(asMaker, newNS("bound", map[string]string{labelkeys.Tenant: "bob"}, nil)), bindingRefused},
		{"a namespace maker marks a backend namespace",
			create(asMaker, newNS("backend", map[string]string{labelkeys.Backend: labelkeys.BackendValue}, nil)), bindingRefused},
		{"a namespace maker creates a plain namespace", create(asMaker, newNS("plain", map[string]string{"team": "a"}, nil)), ""},
		{"an identity allowed to bind namespacebindings binds a namespace", create(asBinder, newNS("bound-by-binder", map[string]string{labelkeys.Tenant: "bob"}, nil)), ""},
		{"a namespace admin edits their namespace's own labels", edit(asNSAdmin, func(ns *corev1.Namespace) {
			ns.Labels["cost-centre"] = "42"
		}), ""},
		{"a namespace admin turns their namespace into a backend", edit(asNSAdmin, func(ns *corev1.Namespace) {
			ns.Labels[labelkeys.Backend] = labelkeys.BackendValue
		}), bindingRefused},
		{"a namespace admin binds their namespace to another user", edit(asNSAdmin, func(ns *corev1.Namespace) {
			ns.Labels[labelkeys.Tenant] = "bob"
		}), bindingRefused},
		{"a namespace admin writes a backend users list", edit(asNSAdmin, func(ns *corev1.Namespace) {
			ns.Annotations = map[string]string{labelkeys.BackendUsers: "bob"}
		}), bindingRefused},
		{"a namespace admin marks their namespace as the manager's", edit(asNSAdmin, func(ns *corev1.Namespace) {
			ns.Annotations = createdBy
		}), markRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do(t.Context())
			if tc.denied == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsForbidden(err) || apierrors.IsInvalid(err), "refused: %v", err)
			assert.Contains(t, err.Error(), tc.denied)
		})
	}
	t.Run("a refused namespace does not exist", func(t *testing.T) {
		_, err := admin.CoreV1().Namespaces().Get(t.Context(), "user-victim-"+suffix, metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "got %v", err)
	})
}

// grantClusterRule grants user one cluster-wide rule, by a ClusterRole and
// binding called name.
func grantClusterRule(t *testing.T, c kubernetes.Interface, name, user string, rule rbacv1.PolicyRule) {
	t.Helper()
	bindClusterRole(t, c, user, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}})
}

func bindClusterRole(t *testing.T, c kubernetes.Interface, user string, role *rbacv1.ClusterRole) {
	t.Helper()
	_, err := c.RbacV1().ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = c.RbacV1().ClusterRoleBindings().Create(t.Context(), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.RbacV1().ClusterRoleBindings().Delete(context.Background(), role.Name, metav1.DeleteOptions{})
		_ = c.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{})
	})
}

// grantWildcardRole gives user every verb on every resource in namespace, as
// platform teams grant a "namespace admin"; it includes the Namespace object.
func grantWildcardRole(t *testing.T, c kubernetes.Interface, namespace, user string) {
	t.Helper()
	_, err := c.RbacV1().Roles(namespace).Create(t.Context(), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "namespace-admin"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = c.RbacV1().RoleBindings(namespace).Create(t.Context(), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "namespace-admin"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "namespace-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}, metav1.CreateOptions{})
	require.NoError(t, err)
}
