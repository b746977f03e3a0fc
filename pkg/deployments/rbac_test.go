package deployments_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"opsnorth.io/scheduler/pkg/testenv"
)

// managerConfig returns credentials of a user bound only to the generated
// ClusterRole manifests/rbac/deployments/role.yaml, so the tests prove the
// RBAC markers grant what the manager does.
func managerConfig(t *testing.T, c client.Client) *rest.Config {
	t.Helper()
	env := testenv.Require(t)
	data, err := os.ReadFile(filepath.Join(env.RepoRoot, "manifests", "rbac", "deployments", "role.yaml"))
	require.NoError(t, err)
	var role rbacv1.ClusterRole
	require.NoError(t, yaml.Unmarshal(data, &role))
	ctx := context.Background()
	if err := c.Create(ctx, &role); !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	const user = "deployments-manager"
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if err := c.Create(ctx, binding); !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	path, err := env.KubeconfigFor(t.TempDir(), user)
	require.NoError(t, err)
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	require.NoError(t, err)
	restricted, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	err = restricted.List(ctx, &corev1.SecretList{})
	require.True(t, apierrors.IsForbidden(err), "the manager's user may not read Secrets: %v", err)
	return cfg
}
