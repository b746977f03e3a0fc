package integration

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"opsnorth.io/scheduler/pkg/testenv"
)

// TestManagerRBACReach installs the all-in-one overlay's RBAC for real and
// asks the API server (SubjectAccessReview) what each manager's
// ServiceAccount may do: its own kinds and the reads they need, nothing more.
func TestManagerRBACReach(t *testing.T) {
	env := testenv.Require(t)
	admin := kubernetes.NewForConfigOrDie(env.Config)
	installRBAC(t, env, renderOverlay(t, filepath.Join(env.RepoRoot, "kustomize", "overlays", "all-in-one")))
	sa := func(c string) string { return "system:serviceaccount:opsnorth-system:opsnorth-scheduler-" + c }
	for _, tc := range []struct {
		manager, verb, group, resource, subresource, namespace, name string
		allowed                                                      bool
	}{
		// The tasks and workflows managers serve every bound and backend
		// namespace, so their RBAC is cluster-wide: each manager's fence
		// policy bounds where they write (TestTenantPolicies), and the tenant
		// binding where step tasks are created.
		{"tasks", "create", "batch", "jobs", "", "agent-tasks", "", true},
		{"tasks", "create", "batch", "jobs", "", "kube-system", "", true},
		{"tasks", "get", "", "secrets", "", "agent-tasks", "", true},
		// By name only: a widening README's Multi-tenancy names.
		{"tasks", "get", "", "secrets", "", "kube-system", "", true},
		{"tasks", "list", "", "secrets", "", "", "", false},
		{"tasks", "watch", "", "secrets", "", "agent-tasks", "", false},
		{"tasks", "get", "", "serviceaccounts", "", "agent-tasks", "", true},
		{"tasks", "update", "scheduler.opsnorth.io", "agenttasks", "finalizers", "agent-tasks", "", true},
		{"tasks", "delete", "batch", "jobs", "", "agent-tasks", "", true},
		{"tasks", "create", "", "pods", "", "agent-tasks", "", false},
		{"tasks", "create", "scheduler.opsnorth.io", "agenttasks", "", "agent-tasks", "", false},
		{"tasks", "create", "rbac.authorization.k8s.io", "rolebindings", "", "agent-tasks", "", false},
		{"workflows", "update", "scheduler.opsnorth.io", "workflows", "finalizers", "agent-tasks", "", true},
		{"workflows", "create", "scheduler.opsnorth.io", "agenttasks", "", "agent-tasks", "", true},
		{"workflows", "create", "batch", "jobs", "", "agent-tasks", "", false},
		{"workflows", "list", "", "secrets", "", "", "", false},
		{"workflows", "get", "", "secrets", "", "opsnorth-system", "opsnorth-scheduler-workflows-step-key", true},
		// get by name reaches every namespace (webhook signing Secrets live
		// in each task's namespace); list and watch never do.
		{"workflows", "get", "", "secrets", "", "opsnorth-system", "opsnorth-scheduler-tasks-token", true},
		{"workflows", "list", "", "secrets", "", "opsnorth-system", "", false},
		{"deployments", "list", "", "secrets", "", "", "", false},
		{"deployments", "get", "", "secrets", "", "user-alice", "", false},
		{"deployments", "create", "", "pods", "", "user-alice", "", false},
		{"deployments", "create", "rbac.authorization.k8s.io", "rolebindings", "", "user-alice", "", false},
		{"deployments", "update", "scheduler.opsnorth.io", "userdeployments", "finalizers", "default", "", true},
		// Host claims: Leases in its own namespace only.
		{"deployments", "create", "coordination.k8s.io", "leases", "", "opsnorth-system", "", true},
		{"deployments", "delete", "coordination.k8s.io", "leases", "", "opsnorth-system", "", true},
		{"deployments", "create", "coordination.k8s.io", "leases", "", "user-alice", "", false},
		// Allowed by RBAC; the deployments fence narrows it to namespaces the manager created.
		{"deployments", "delete", "", "namespaces", "", "", "", true},
	} {
		name := tc.manager + " " + tc.verb + " " + tc.resource + "/" + tc.subresource + " " + tc.name + " in " + tc.namespace
		t.Run(name, func(t *testing.T) {
			review, err := admin.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{
					User:   sa(tc.manager),
					Groups: []string{"system:serviceaccounts", "system:serviceaccounts:opsnorth-system", "system:authenticated"},
					ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: tc.verb, Group: tc.group, Resource: tc.resource,
						Subresource: tc.subresource, Namespace: tc.namespace, Name: tc.name},
				},
			}, metav1.CreateOptions{})
			require.NoError(t, err)
			assert.Equal(t, tc.allowed, review.Status.Allowed, "reason: %s", review.Status.Reason)
		})
	}
}

// installRBAC creates the namespaces, roles and bindings among objs.
func installRBAC(t *testing.T, env *testenv.Env, objs []*unstructured.Unstructured) {
	t.Helper()
	dc := newDynamicClient(t, env.Config)
	resources := map[string]schema.GroupVersionResource{
		"Namespace":          corev1.SchemeGroupVersion.WithResource("namespaces"),
		"ClusterRole":        rbacv1.SchemeGroupVersion.WithResource("clusterroles"),
		"ClusterRoleBinding": rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings"),
		"Role":               rbacv1.SchemeGroupVersion.WithResource("roles"),
		"RoleBinding":        rbacv1.SchemeGroupVersion.WithResource("rolebindings"),
	}
	for _, kind := range []string{"Namespace", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
		for _, obj := range objs {
			if obj.GetKind() != kind {
				continue
			}
			var rc dynamic.ResourceInterface = dc.Resource(resources[kind])
			if obj.GetNamespace() != "" {
				rc = dc.Resource(resources[kind]).Namespace(obj.GetNamespace())
			}
			_, err := rc.Apply(t.Context(), obj.GetName(), obj, metav1.ApplyOptions{FieldManager: "rbac-reach-test", Force: true})
			require.NoError(t, err, "apply %s %s", kind, obj.GetName())
		}
	}
}
