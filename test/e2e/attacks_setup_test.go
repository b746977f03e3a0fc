//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/localcluster"
	"opsnorth.io/scheduler/pkg/testkit"
)

// tenancyWorld is the cluster the attack suite plays on: two tenants' bound
// namespaces, a team namespace nobody marked, a full-trust backend
// namespace and one whose users list names alice only; and the people of a
// platform, each with the RBAC a platform hands them.
type tenancyWorld struct {
	c                                 *localcluster.Cluster
	alice, bob                        string // userIds, and the names of their bound namespaces
	team, backend, listed             string // namespaces
	tenant, nsAdmin, approver, backer string // usernames
	colleague, operator, nsCreator    string
	reviewers                         string // a group the approver is a member of
}

func newTenancyWorld(t *testing.T, c *localcluster.Cluster) *tenancyWorld {
	t.Helper()
	id := fmt.Sprintf("e2e-%d", time.Now().Unix()%100000)
	w := &tenancyWorld{c: c, alice: id + "-alice", bob: id + "-bob", team: id + "-team", backend: id + "-backend", listed: id + "-listed",
		tenant: id + "-tenant", nsAdmin: id + "-nsadmin", approver: id + "-approver", backer: id + "-backer",
		colleague: id + "-colleague", operator: id + "-operator", nsCreator: id + "-nscreator", reviewers: id + "-reviewers"}
	listed := testkit.MakeBackendNamespace(w.listed, "")
	listed.Annotations = map[string]string{labelkeys.BackendUsers: w.alice}
	for _, ns := range []*corev1.Namespace{testkit.MakeBoundNamespace(w.alice, w.alice), testkit.MakeBoundNamespace(w.bob, w.bob),
		{ObjectMeta: metav1.ObjectMeta{Name: w.team}}, testkit.MakeBackendNamespace(w.backend, ""), listed} {
		_, err := c.Clientset.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{})
		require.NoError(t, err)
		name := ns.Name
		t.Cleanup(func() {
			_ = c.Clientset.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	w.bind(t, w.alice, "edit", w.tenant)
	w.bind(t, w.bob, "edit", id+"-bobby")
	w.bind(t, w.alice, "opsnorth-scheduler-approve", w.approver)
	w.bind(t, w.backend, "edit", w.backer, w.colleague)
	w.bind(t, w.listed, "edit", w.backer)
	w.role(t, w.alice, w.nsAdmin, rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}})
	w.role(t, w.team, w.nsAdmin, rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}})
	w.role(t, w.backend, w.operator, rbacv1.PolicyRule{APIGroups: []string{"scheduler.opsnorth.io"}, Resources: []string{"workflows"},
		Verbs: []string{"get", "update"}}, rbacv1.PolicyRule{APIGroups: []string{"scheduler.opsnorth.io"}, Resources: []string{"users"},
		ResourceNames: []string{w.alice}, Verbs: []string{"control"}})
	w.clusterRole(t, w.nsCreator, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"create"}})
	for _, ns := range []string{w.alice, w.bob, w.team, w.backend, w.listed} {
		require.Eventually(t, func() bool {
			_, err := c.Clientset.CoreV1().ServiceAccounts(ns).Get(t.Context(), "default", metav1.GetOptions{})
			return err == nil
		}, timeout, tick, "default ServiceAccount of %s", ns)
	}
	// RBAC takes effect when the authorizer's informers see the bindings.
	w.waitAllowed(t, w.tenant, "create", "scheduler.opsnorth.io", "agenttasks", w.alice)
	w.waitAllowed(t, w.approver, "update", "scheduler.opsnorth.io", "workflows", w.alice)
	w.waitAllowed(t, w.colleague, "update", "scheduler.opsnorth.io", "workflows", w.backend)
	w.waitAllowed(t, w.backer, "create", "scheduler.opsnorth.io", "workflows", w.listed)
	w.waitAllowed(t, w.nsAdmin, "update", "", "namespaces", w.team)
	w.waitAllowed(t, w.operator, "update", "scheduler.opsnorth.io", "workflows", w.backend)
	w.waitAllowed(t, w.nsCreator, "create", "", "namespaces", "")
	return w
}

// as is a scheduler client authenticated as user in groups.
func (w *tenancyWorld) as(t *testing.T, user string, groups ...string) versioned.Interface {
	t.Helper()
	cs, err := versioned.NewForConfig(w.impersonate(user, groups...))
	require.NoError(t, err)
	return cs
}

// kube is a Kubernetes client authenticated as user in groups.
func (w *tenancyWorld) kube(t *testing.T, user string, groups ...string) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(w.impersonate(user, groups...))
	require.NoError(t, err)
	return cs
}

func (w *tenancyWorld) impersonate(user string, groups ...string) *rest.Config {
	cfg := rest.CopyConfig(w.c.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append([]string{"system:authenticated"}, groups...)}
	return cfg
}

// bind grants users a ClusterRole in namespace with one RoleBinding, as a
// platform hands a team its namespace.
func (w *tenancyWorld) bind(t *testing.T, namespace, clusterRole string, users ...string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: clusterRole + "-" + users[0]},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole}}
	for _, u := range users {
		rb.Subjects = append(rb.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
	}
	_, err := w.c.Clientset.RbacV1().RoleBindings(namespace).Create(t.Context(), rb, metav1.CreateOptions{})
	require.NoError(t, err)
}

// role grants user rules in namespace.
func (w *tenancyWorld) role(t *testing.T, namespace, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	_, err := w.c.Clientset.RbacV1().Roles(namespace).Create(t.Context(), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules},
		metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = w.c.Clientset.RbacV1().RoleBindings(namespace).Create(t.Context(), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}, metav1.CreateOptions{})
	require.NoError(t, err)
}

// clusterRole grants user rules cluster-wide, removed when the test ends.
func (w *tenancyWorld) clusterRole(t *testing.T, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	rbac := w.c.Clientset.RbacV1()
	_, err := rbac.ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = rbac.ClusterRoleBindings().Create(t.Context(), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(context.Background(), user, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(context.Background(), user, metav1.DeleteOptions{})
	})
}

func (w *tenancyWorld) waitAllowed(t *testing.T, user, verb, group, resource, namespace string) {
	t.Helper()
	require.Eventually(t, func() bool {
		sar, err := w.c.Clientset.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: []string{"system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: verb, Group: group, Resource: resource}}},
			metav1.CreateOptions{})
		return err == nil && sar.Status.Allowed
	}, timeout, tick, "%s may %s %s in %q", user, verb, resource, namespace)
}
