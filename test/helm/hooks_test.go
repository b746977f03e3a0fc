package helm

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestHelmTestHook: `helm test` runs one pod, in a manager's own image, that
// checks every enabled manager's Deployment in the release namespace and
// every CRD, as a ServiceAccount that may get exactly those and nothing else;
// its RBAC is created before it (weight -1) and every hook object goes once
// the test passed.
func TestHelmTestHook(t *testing.T) {
	cases := []struct {
		name, namespace string
		set             []string
		deployments     []string
	}{
		{name: "defaults", namespace: releaseNamespace, deployments: []string{"deployments", "tasks", "workflows"}},
		{name: "another release namespace, a manager off, CRDs installed elsewhere", namespace: "ops",
			set: []string{"managers.deployments.enabled=false", "crds.install=false"}, deployments: []string{"tasks", "workflows"}},
	}
	crds := render(t).names("CustomResourceDefinition")
	require.NotEmpty(t, crds)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := renderIn(t, tc.namespace, tc.set...)
			kinds := map[string]int{}
			for _, h := range out.hooks {
				kinds[h.GetKind()]++
				assert.Equal(t, "test", h.GetAnnotations()["helm.sh/hook"], "%s", key(h))
				assert.Equal(t, "before-hook-creation,hook-succeeded", h.GetAnnotations()["helm.sh/hook-delete-policy"], "%s", key(h))
				assert.Equal(t, "opsnorth-scheduler-test", h.GetName())
				if h.GetKind() != "Pod" {
					assert.Equal(t, "-1", h.GetAnnotations()["helm.sh/hook-weight"], "%s exists before the pod", key(h))
				}
			}
			assert.Equal(t, map[string]int{"ServiceAccount": 1, "Role": 1, "RoleBinding": 1, "ClusterRole": 1, "ClusterRoleBinding": 1, "Pod": 1}, kinds)

			pod := testPod(t, out)
			assert.Equal(t, tc.namespace, pod.Namespace)
			assert.Equal(t, corev1.RestartPolicyNever, pod.Spec.RestartPolicy)
			assert.Equal(t, "opsnorth-scheduler-test", pod.Spec.ServiceAccountName)
			require.Len(t, pod.Spec.Containers, 1)
			c := pod.Spec.Containers[0]
			first := deployment(t, out, tc.namespace, tc.deployments[0]).Spec.Template.Spec.Containers[0]
			assert.Equal(t, first.Image, c.Image, "the first enabled manager's image: no kubectl, no other image")
			assert.Empty(t, c.Command, "the image's entrypoint, the manager binary")
			names := make([]string, 0, len(tc.deployments))
			for _, d := range tc.deployments {
				names = append(names, "opsnorth-scheduler-"+d)
			}
			assert.Equal(t, []string{"check-install", "--namespace=" + tc.namespace, "--deployment=" + strings.Join(names, ","),
				"--crd=" + strings.Join(crds, ","), "--timeout=2m"}, c.Args, "the CRDs are checked even where the chart does not install them")

			hooks := &rendered{objs: out.hooks}
			assert.Equal(t, []string{"group=\"apps\" resource=deployments name=" + strings.Join(names, ",") + " verb=get"},
				grants(t, hooks.get("Role", tc.namespace, "opsnorth-scheduler-test")), "get on the managers' Deployments by name, nothing else")
			assert.Equal(t, []string{"group=\"apiextensions.k8s.io\" resource=customresourcedefinitions name=" + strings.Join(crds, ",") + " verb=get"},
				grants(t, hooks.get("ClusterRole", "", "opsnorth-scheduler-test")), "get on the suite's CRDs by name, nothing else")
			for _, b := range []*unstructured.Unstructured{hooks.get("RoleBinding", tc.namespace, "opsnorth-scheduler-test"), hooks.get("ClusterRoleBinding", "", "opsnorth-scheduler-test")} {
				require.NotNil(t, b)
				assert.Contains(t, binding(t, b), "-> ServiceAccount "+tc.namespace+"/opsnorth-scheduler-test")
			}
		})
	}
}

// TestLeastPrivilege audits every Role and ClusterRole of the chart, its
// test's included, as test/integration audits the kustomize overlays: no
// wildcard (but every resource of a named group other than the core one, to
// list, which the deployments inventory needs), no cluster-wide Secret verb
// but get; the test's roles only get, by name.
func TestLeastPrivilege(t *testing.T) {
	out := render(t, "monitoring.serviceMonitor.enabled=true", "monitoring.dashboard.enabled=true")
	for _, obj := range out.all() {
		if obj.GetKind() != "ClusterRole" && obj.GetKind() != "Role" {
			continue
		}
		var role rbacv1.ClusterRole
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role))
		for _, rule := range role.Rules {
			fields := [][]string{rule.Verbs, rule.Resources, rule.APIGroups}
			if slices.Equal(rule.Verbs, []string{"list"}) && !slices.Contains(rule.APIGroups, "") {
				fields = [][]string{rule.Verbs, rule.APIGroups}
			}
			for _, field := range fields {
				assert.NotContains(t, field, "*", "%s has a wildcard: %+v", key(obj), rule)
			}
			if obj.GetKind() == "ClusterRole" && slices.Contains(rule.APIGroups, "") && slices.Contains(rule.Resources, "secrets") {
				assert.Equal(t, []string{"get"}, rule.Verbs, "%s may only get Secrets by name", key(obj))
			}
			if obj.GetLabels()["app.kubernetes.io/component"] == "test" {
				assert.Equal(t, []string{"get"}, rule.Verbs, "%s", key(obj))
				assert.NotEmpty(t, rule.ResourceNames, "%s reads only what it checks, by name", key(obj))
			}
		}
	}
}

// assertRecommendedLabels checks Kubernetes' recommended labels and Helm's
// on every object the chart renders, its hooks included.
func assertRecommendedLabels(t *testing.T, ch *chartv2.Chart, out *rendered) {
	t.Helper()
	for _, obj := range out.all() {
		labels := obj.GetLabels()
		for label, want := range map[string]string{
			"app.kubernetes.io/name":       "opsnorth-scheduler",
			"app.kubernetes.io/part-of":    "opsnorth-scheduler",
			"app.kubernetes.io/managed-by": "Helm",
			"app.kubernetes.io/instance":   releaseName,
			"app.kubernetes.io/version":    ch.Metadata.AppVersion,
			"helm.sh/chart":                ch.Metadata.Name + "-" + ch.Metadata.Version,
		} {
			assert.Equal(t, want, labels[label], "%s: label %s", key(obj), label)
		}
		assert.NotEmpty(t, labels["app.kubernetes.io/component"], "%s: label app.kubernetes.io/component", key(obj))
	}
}

// grants is a role's permissions, one string per rule.
func grants(t *testing.T, obj *unstructured.Unstructured) []string {
	t.Helper()
	require.NotNil(t, obj)
	var role rbacv1.ClusterRole
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role))
	var out []string
	for _, r := range role.Rules {
		out = append(out, "group="+strings.Join(quoted(r.APIGroups), ",")+" resource="+strings.Join(r.Resources, ",")+
			" name="+strings.Join(r.ResourceNames, ",")+" verb="+strings.Join(r.Verbs, ","))
	}
	return out
}

func quoted(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = `"` + v + `"`
	}
	return out
}

// testPod is the helm test's pod.
func testPod(t *testing.T, out *rendered) *corev1.Pod {
	t.Helper()
	var pods []*unstructured.Unstructured
	for _, h := range out.hooks {
		if h.GetKind() == "Pod" {
			pods = append(pods, h)
		}
	}
	require.Len(t, pods, 1, "one test pod")
	var pod corev1.Pod
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(pods[0].Object, &pod))
	return &pod
}
