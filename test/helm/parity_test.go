package helm

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestChartMatchesKustomize renders the chart and
// kustomize/overlays/all-in-one, both with and without the ServiceMonitor
// (monitoring.serviceMonitor.enabled; the opt-in component
// kustomize/components/monitoring), and requires the same install: the same
// objects (but the managers' Namespace, which under Helm is the release
// namespace that `helm install --create-namespace` makes), the same RBAC
// rules (compared as sets of single permissions) and bindings, the same CRDs,
// admission policies, NetworkPolicy, Services, PodDisruptionBudgets, and
// manager pods hardened and probed alike. The chart may add labels and
// annotations, and flags and env vars whose values are the binaries'
// defaults.
func TestChartMatchesKustomize(t *testing.T) {
	for name, tc := range map[string]struct {
		set        []string
		components []string
	}{
		"defaults":       {},
		"ServiceMonitor": {set: []string{"monitoring.serviceMonitor.enabled=true"}, components: []string{monitoring}},
	} {
		t.Run(name, func(t *testing.T) {
			kustomize := byKey(t, renderKustomize(t, allInOne, tc.components...))
			require.Contains(t, kustomize, "Namespace "+releaseNamespace)
			delete(kustomize, "Namespace "+releaseNamespace)
			assertSameInstall(t, byKey(t, render(t, tc.set...).objs), kustomize)
		})
	}
}

// TestKustomizeMonitoringOptIn: the cluster unit and all-in-one carry no
// ServiceMonitor (a cluster without prometheus-operator refuses the kind,
// and with it the whole apply); an overlay adding
// kustomize/components/monitoring carries the one the chart renders with
// monitoring.serviceMonitor.enabled.
func TestKustomizeMonitoringOptIn(t *testing.T) {
	chart := render(t, "monitoring.serviceMonitor.enabled=true").get("ServiceMonitor", releaseNamespace, "opsnorth-scheduler")
	require.NotNil(t, chart)
	for _, dir := range []string{cluster, allInOne} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			assert.Empty(t, (&rendered{objs: renderKustomize(t, dir)}).ofKind("ServiceMonitor"), "not without the component")
			with := (&rendered{objs: renderKustomize(t, dir, monitoring)}).ofKind("ServiceMonitor")
			require.Len(t, with, 1, "the component adds it")
			assert.Equal(t, key(chart), key(with[0]))
			assert.Equal(t, chart.Object["spec"], with[0].Object["spec"])
		})
	}
}

// assertSameInstall compares the chart's objects with kustomize's, by key.
func assertSameInstall(t *testing.T, chart, kustomize map[string]*unstructured.Unstructured) {
	t.Helper()
	assert.ElementsMatch(t, slices.Collect(maps.Keys(kustomize)), slices.Collect(maps.Keys(chart)),
		"the chart and the all-in-one overlay install the same objects")

	for k, want := range kustomize {
		got, ok := chart[k]
		if !ok {
			continue
		}
		t.Run(k, func(t *testing.T) {
			for key, value := range want.GetLabels() {
				assert.Equal(t, value, got.GetLabels()[key], "label %s", key)
			}
			switch want.GetKind() {
			case "ClusterRole", "Role":
				assert.Equal(t, permissions(t, want), permissions(t, got), "rules")
			case "ClusterRoleBinding", "RoleBinding":
				assert.Equal(t, binding(t, want), binding(t, got))
			case "CustomResourceDefinition":
				assert.Equal(t, want.Object["spec"], got.Object["spec"], "the CRD's spec")
				for key, value := range want.GetAnnotations() {
					assert.Equal(t, value, got.GetAnnotations()[key], "annotation %s", key)
				}
			case "Deployment":
				assertSameManagerDeployment(t, want, got)
			case "ConfigMap":
				// The same settings; the comments are kustomize's.
				wantData, _, _ := unstructured.NestedStringMap(want.Object, "data")
				gotData, _, _ := unstructured.NestedStringMap(got.Object, "data")
				require.Len(t, gotData, len(wantData))
				for file, text := range wantData {
					assert.YAMLEq(t, text, gotData[file], "file %s", file)
				}
			case "Namespace", "ServiceAccount":
				// Labels, compared above, are all they have.
			default:
				// Policies, their bindings, Services, PDBs, NetworkPolicy,
				// ServiceMonitor: their whole spec.
				require.Contains(t, want.Object, "spec", "a %s without spec: compare it otherwise", want.GetKind())
				assert.Equal(t, want.Object["spec"], got.Object["spec"])
			}
		})
	}
}

// permissions expands a Role's or ClusterRole's rules into single
// permissions (group, resource, resourceName, verb), sorted: rules that grant
// the same, however grouped, compare equal.
func permissions(t *testing.T, obj *unstructured.Unstructured) []string {
	t.Helper()
	var role rbacv1.ClusterRole // Role and ClusterRole share the rules' shape
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role))
	set := map[string]bool{}
	for _, r := range role.Rules {
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{"*"}
		}
		for _, verb := range r.Verbs {
			for _, url := range r.NonResourceURLs {
				set[fmt.Sprintf("url=%s verb=%s", url, verb)] = true
			}
			for _, group := range r.APIGroups {
				for _, res := range r.Resources {
					for _, name := range names {
						set[fmt.Sprintf("group=%q resource=%s name=%s verb=%s", group, res, name, verb)] = true
					}
				}
			}
		}
	}
	if role.AggregationRule != nil {
		// Its rules are what the aggregation controller gathers.
		return []string{fmt.Sprintf("aggregates %v", role.AggregationRule.ClusterRoleSelectors)}
	}
	require.NotEmpty(t, set, "%s grants nothing", key(obj))
	return slices.Sorted(maps.Keys(set))
}

// binding is a binding's role and subjects, subjects sorted.
func binding(t *testing.T, obj *unstructured.Unstructured) string {
	t.Helper()
	var b rbacv1.ClusterRoleBinding // RoleBinding has the same shape
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &b))
	var subjects []string
	for _, s := range b.Subjects {
		subjects = append(subjects, fmt.Sprintf("%s %s/%s", s.Kind, s.Namespace, s.Name))
	}
	sort.Strings(subjects)
	return fmt.Sprintf("%s %s -> %s", b.RoleRef.Kind, b.RoleRef.Name, strings.Join(subjects, ", "))
}

// assertSameManagerDeployment compares a manager Deployment field by field:
// everything equal but the container's pull policy (which kustomize leaves to
// the API server's default), its flags, env and pod annotations, of which
// the chart must have every one of kustomize's.
func assertSameManagerDeployment(t *testing.T, wantObj, gotObj *unstructured.Unstructured) {
	t.Helper()
	var want, got appsv1.Deployment
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(wantObj.Object, &want))
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(gotObj.Object, &got))
	require.Len(t, got.Spec.Template.Spec.Containers, len(want.Spec.Template.Spec.Containers))
	for i := range want.Spec.Template.Spec.Containers {
		w, g := &want.Spec.Template.Spec.Containers[i], &got.Spec.Template.Spec.Containers[i]
		assert.Subset(t, g.Args, w.Args, "container %s: kustomize's flags", w.Name)
		assert.Subset(t, g.Env, w.Env, "container %s: kustomize's env", w.Name)
		w.Args, g.Args, w.Env, g.Env = nil, nil, nil, nil
		g.ImagePullPolicy = ""
	}
	for key, value := range want.Spec.Template.Labels {
		assert.Equal(t, value, got.Spec.Template.Labels[key], "pod label %s", key)
	}
	want.Spec.Template.Labels, got.Spec.Template.Labels = nil, nil
	for key, value := range want.Spec.Template.Annotations {
		assert.Equal(t, value, got.Spec.Template.Annotations[key], "pod annotation %s", key)
	}
	want.Spec.Template.Annotations, got.Spec.Template.Annotations = nil, nil // the chart's checksums
	assert.Equal(t, want.Spec, got.Spec)
}
