package integration

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// What a platform team audits in a rendered overlay: the objects of each
// manager, least-privilege roles, restricted pods.

// assertKinds checks that an overlay holds shared[kind] objects of each kind
// of shared ("UserRole": the ClusterRoles of base/roles), and each of
// components' managers: one Deployment,
// ServiceAccount, metrics Service, PodDisruptionBudget, ClusterRole and
// ClusterRoleBinding each, and a leader-election Role.
func assertKinds(t *testing.T, objs []*unstructured.Unstructured, shared map[string]int, components []string) {
	t.Helper()
	count := map[string]int{}
	for _, obj := range objs {
		if !isUserRole(obj) && obj.GetName() != inventoryRole { // counted by the caller as shared; checked below
			count[obj.GetKind()]++
		}
	}
	if slices.Contains(components, "deployments") {
		assert.NotNil(t, find(objs, "ClusterRole", inventoryRole), "the deployments inventory's aggregated ClusterRole")
		assert.NotNil(t, find(objs, "ClusterRoleBinding", inventoryRole), "and its binding")
	}
	count["UserRole"] = len(slices.DeleteFunc(slices.Clone(objs), func(o *unstructured.Unstructured) bool { return !isUserRole(o) }))
	for kind, n := range shared {
		assert.Equal(t, n, count[kind], "kind %s", kind)
	}
	n := len(components)
	for _, kind := range []string{"Deployment", "ServiceAccount", "Service", "PodDisruptionBudget", "ClusterRole", "ClusterRoleBinding"} {
		assert.Equal(t, n, count[kind], "kind %s", kind)
	}
	for _, c := range components {
		name := "opsnorth-scheduler-" + c
		assert.NotNil(t, find(objs, "Deployment", name), "deployment %s", name)
		assert.NotNil(t, find(objs, "ClusterRole", name), "clusterrole %s", name)
		assert.NotNil(t, find(objs, "Role", name+"-leader-election"), "leader election role of %s", name)
	}
}

// inventoryRole is the aggregated ClusterRole through which a platform lets
// the deployments manager's inventory list further kinds.
const inventoryRole = "opsnorth-scheduler-deployments-inventory"

// assertLeastPrivilege refuses wildcards anywhere (but every resource of a
// named group other than the core one, to list, which the deployments
// inventory needs), and any cluster-wide secret verb but get: a manager that
// serves every tenant namespace reads the Secrets a task names, by name, and
// can never enumerate them.
func assertLeastPrivilege(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	if obj.GetKind() != "ClusterRole" && obj.GetKind() != "Role" {
		return
	}
	var role rbacv1.ClusterRole // Role and ClusterRole share the rules' shape
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role))
	for _, rule := range role.Rules {
		fields := [][]string{rule.Verbs, rule.Resources, rule.APIGroups}
		if slices.Equal(rule.Verbs, []string{"list"}) && !slices.Contains(rule.APIGroups, "") {
			fields = [][]string{rule.Verbs, rule.APIGroups}
		}
		for _, field := range fields {
			assert.NotContains(t, field, "*", "%s %s has a wildcard: %+v", obj.GetKind(), obj.GetName(), rule)
		}
		if obj.GetKind() == "ClusterRole" && slices.Contains(rule.APIGroups, "") && slices.Contains(rule.Resources, "secrets") {
			assert.Equal(t, []string{"get"}, rule.Verbs, "ClusterRole %s may only get secrets by name, never list, watch or write them cluster-wide", obj.GetName())
		}
	}
}

// declaredRoles reads the roles controller-gen generated from each manager's
// +kubebuilder:rbac markers, by roleKey.
func declaredRoles(t *testing.T, root string) map[string][]rbacv1.PolicyRule {
	t.Helper()
	out := map[string][]rbacv1.PolicyRule{}
	for _, c := range []string{"deployments", "tasks", "workflows"} {
		for _, obj := range renderOverlay(t, filepath.Join(root, "manifests", "rbac", c)) {
			var role rbacv1.ClusterRole
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role))
			out[roleKey(obj)] = role.Rules
		}
	}
	return out
}

// assertOnlyDeclaredPermissions allows a role only if it is one the markers
// declared, unchanged, or a leader-election Role limited to leases and events.
func assertOnlyDeclaredPermissions(t *testing.T, obj *unstructured.Unstructured, declared map[string][]rbacv1.PolicyRule) {
	t.Helper()
	if obj.GetKind() != "ClusterRole" && obj.GetKind() != "Role" {
		return
	}
	var role rbacv1.ClusterRole
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role))
	if strings.HasSuffix(obj.GetName(), "-leader-election") {
		for _, rule := range role.Rules {
			for _, res := range rule.Resources {
				assert.Contains(t, []string{"leases", "events"}, res, "leader-election role %s grants %s", obj.GetName(), res)
			}
		}
		return
	}
	if obj.GetName() == inventoryRole {
		assert.NotNil(t, role.AggregationRule, "%s aggregates", inventoryRole)
		assert.Empty(t, role.Rules, "%s grants only what the platform aggregates into it", inventoryRole)
		return
	}
	if isUserRole(obj) {
		for _, rule := range role.Rules {
			for _, g := range rule.APIGroups {
				assert.Contains(t, []string{"scheduler.opsnorth.io", "ossa.ai"}, g, "user role %s grants group %q", obj.GetName(), g)
			}
		}
		return
	}
	want, ok := declared[roleKey(obj)]
	require.True(t, ok, "%s %s is not generated from RBAC markers", obj.GetKind(), obj.GetName())
	assert.Equal(t, want, role.Rules, "%s %s differs from its markers", obj.GetKind(), obj.GetName())
}

// isUserRole reports a ClusterRole of kustomize/base/roles, bound to people.
func isUserRole(obj *unstructured.Unstructured) bool {
	return obj.GetKind() == "ClusterRole" && obj.GetLabels()["app.kubernetes.io/component"] == "user-roles"
}

// roleKey is "<kind>/<namespace>/<name>": a manager's Roles of one name
// live in several namespaces (the watched ones and its own).
func roleKey(obj *unstructured.Unstructured) string {
	return obj.GetKind() + "/" + obj.GetNamespace() + "/" + obj.GetName()
}

func assertRestrictedPods(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	if obj.GetKind() != "Deployment" {
		return
	}
	var d appsv1.Deployment
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &d))
	pod := d.Spec.Template.Spec
	require.NotNil(t, pod.SecurityContext)
	assert.Equal(t, ptrTo(true), pod.SecurityContext.RunAsNonRoot, d.Name)
	require.NotNil(t, pod.SecurityContext.SeccompProfile, d.Name)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, pod.SecurityContext.SeccompProfile.Type)
	assert.GreaterOrEqual(t, *d.Spec.Replicas, int32(2), "%s runs a standby", d.Name)
	for _, c := range pod.Containers {
		sc := c.SecurityContext
		require.NotNil(t, sc, c.Name)
		assert.Equal(t, ptrTo(false), sc.AllowPrivilegeEscalation, d.Name)
		assert.Equal(t, ptrTo(true), sc.ReadOnlyRootFilesystem, d.Name)
		require.NotNil(t, sc.Capabilities, d.Name)
		assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop, d.Name)
		assert.NotEmpty(t, c.Resources.Requests, d.Name)
		assert.NotEmpty(t, c.Resources.Limits, d.Name)
		require.NotNil(t, c.LivenessProbe, d.Name)
		require.NotNil(t, c.ReadinessProbe, d.Name)
	}
}
