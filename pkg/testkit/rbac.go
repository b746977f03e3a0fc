package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"opsnorth.io/scheduler/pkg/testenv"
)

// ManagerConfig returns the identity of a user that holds only the
// generated RBAC of component (manifests/rbac/<component>/role.yaml): its
// ClusterRoles, its Roles of the managers' own namespace there, and its
// other Roles bound in each of namespaces as a deployment binds them in each
// namespace the manager watches. The namespace ""
// (a manager watching all namespaces) grants the Roles' rules cluster-wide,
// as such a deployment must. A manager run as that user proves the
// +kubebuilder:rbac markers grant what its code does.
func ManagerConfig(t *testing.T, env *testenv.Env, component string, namespaces ...string) *rest.Config {
	t.Helper()
	kube, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(env.RepoRoot, "manifests", "rbac", component, "role.yaml"))
	require.NoError(t, err)
	user := "opsnorth-scheduler-" + component + "-test"
	subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}
	ctx := t.Context()
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var meta metav1.TypeMeta
		require.NoError(t, yaml.Unmarshal([]byte(doc), &meta))
		switch meta.Kind {
		case "ClusterRole":
			var role rbacv1.ClusterRole
			require.NoError(t, yaml.Unmarshal([]byte(doc), &role))
			_, err := kube.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{})
			ignoreExists(t, err)
			_, err = kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: role.Name}, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			}, metav1.CreateOptions{})
			ignoreExists(t, err)
		case "Role":
			var own rbacv1.Role
			require.NoError(t, yaml.Unmarshal([]byte(doc), &own))
			if own.Namespace == ManagerNamespace {
				grantInManagerNamespace(t, kube, own, subjects)
				continue
			}
			for _, ns := range namespaces {
				var role rbacv1.Role
				require.NoError(t, yaml.Unmarshal([]byte(doc), &role))
				if ns == "" {
					grantEverywhere(t, kube, role, subjects)
					continue
				}
				role.Namespace = ns
				_, err := kube.RbacV1().Roles(ns).Create(ctx, &role, metav1.CreateOptions{})
				ignoreExists(t, err)
				_, err = kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
					ObjectMeta: metav1.ObjectMeta{Name: role.Name}, Subjects: subjects,
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
				}, metav1.CreateOptions{})
				ignoreExists(t, err)
			}
		}
	}
	path, err := env.KubeconfigFor(t.TempDir(), user)
	require.NoError(t, err)
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	require.NoError(t, err)
	restricted, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	_, err = restricted.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "the %s manager may not list Secrets: %v", component, err)
	return cfg
}

func ignoreExists(t *testing.T, err error) {
	t.Helper()
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
}

// grantEverywhere binds role's rules cluster-wide, under its name with the
// suffix -all-namespaces.
func grantEverywhere(t *testing.T, kube kubernetes.Interface, role rbacv1.Role, subjects []rbacv1.Subject) {
	t.Helper()
	name := role.Name + "-all-namespaces"
	_, err := kube.RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: role.Rules},
		metav1.CreateOptions{})
	ignoreExists(t, err)
	_, err = kube.RbacV1().ClusterRoleBindings().Create(t.Context(), &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
	}, metav1.CreateOptions{})
	ignoreExists(t, err)
}

// ManagerNamespace is the managers' own namespace, as the packaging names
// it; StartManager runs managers as if deployed there.
const ManagerNamespace = "opsnorth-system"

// grantInManagerNamespace creates and binds a Role of the managers' namespace.
func grantInManagerNamespace(t *testing.T, kube kubernetes.Interface, role rbacv1.Role, subjects []rbacv1.Subject) {
	t.Helper()
	_, err := kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ManagerNamespace}}, metav1.CreateOptions{})
	ignoreExists(t, err)
	_, err = kube.RbacV1().Roles(ManagerNamespace).Create(t.Context(), &role, metav1.CreateOptions{})
	ignoreExists(t, err)
	_, err = kube.RbacV1().RoleBindings(ManagerNamespace).Create(t.Context(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
	}, metav1.CreateOptions{})
	ignoreExists(t, err)
}
