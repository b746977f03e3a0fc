//go:build e2e

package e2e

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func TestServiceAccountKubeconfigHasOnlyItsRBAC(t *testing.T) {
	c := requireCluster(t)
	ns := newNamespace(t, c)
	path, err := c.KubeconfigForServiceAccount(ns, "probe")
	require.NoError(t, err)
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	require.NoError(t, err)
	sa, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)

	review, err := sa.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Equal(t, "system:serviceaccount:"+ns+":probe", review.Status.UserInfo.Username)

	forbidden := func(namespace string) func() bool {
		return func() bool {
			_, err := sa.CoreV1().Secrets(namespace).List(t.Context(), metav1.ListOptions{})
			return apierrors.IsForbidden(err)
		}
	}
	allowed := func(namespace string) func() bool {
		return func() bool {
			_, err := sa.CoreV1().Secrets(namespace).List(t.Context(), metav1.ListOptions{})
			return err == nil
		}
	}
	require.True(t, forbidden("")(), "listing secrets cluster-wide without a grant")
	require.True(t, forbidden(ns)(), "listing secrets in its namespace without a grant")

	rules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}}}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "probe"}}
	_, err = c.Clientset.RbacV1().Roles(ns).Create(t.Context(), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read-secrets"}, Rules: rules}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = c.Clientset.RbacV1().RoleBindings(ns).Create(t.Context(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "read-secrets"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-secrets"},
		Subjects:   subject,
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, allowed(ns), timeout, tick, "the Role grants listing secrets in its namespace")
	require.True(t, forbidden("")(), "a Role grants nothing cluster-wide")

	crName := "e2e-read-secrets-" + ns
	_, err = c.Clientset.RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: crName}, Rules: rules}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = c.Clientset.RbacV1().ClusterRoleBindings().Create(t.Context(), &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: crName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: crName},
		Subjects:   subject,
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.Clientset.RbacV1().ClusterRoleBindings().Delete(context.Background(), crName, metav1.DeleteOptions{})
		_ = c.Clientset.RbacV1().ClusterRoles().Delete(context.Background(), crName, metav1.DeleteOptions{})
	})
	require.Eventually(t, allowed(""), timeout, tick, "the ClusterRoleBinding grants listing secrets cluster-wide")
}

// TestSupervisedProcessRunsAsServiceAccount runs a program the way the local
// suite runs a manager: supervised by the cluster, with a ServiceAccount
// kubeconfig.
func TestSupervisedProcessRunsAsServiceAccount(t *testing.T) {
	c := requireCluster(t)
	ns := newNamespace(t, c)
	path, err := c.KubeconfigForServiceAccount(ns, "runner")
	require.NoError(t, err)
	p, err := c.StartProcess("whoami-"+ns, c.Binary("kubectl"), []string{"auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"}, []string{"KUBECONFIG=" + path})
	require.NoError(t, err)
	require.Eventually(t, p.Exited, timeout, tick)
	require.Equal(t, "exited with status 0", p.State())
	out, err := os.ReadFile(p.LogPath)
	require.NoError(t, err)
	require.Equal(t, "system:serviceaccount:"+ns+":runner", string(out))
}
