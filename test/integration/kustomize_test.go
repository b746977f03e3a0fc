package integration

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"opsnorth.io/scheduler/pkg/testenv"
)

// managerComponents are the managers, each with its own overlay
// kustomize/overlays/<component>.
var managerComponents = []string{"deployments", "tasks", "workflows"}

// TestKustomizeOverlays renders every overlay users apply and checks what a
// platform team audits before installing: the expected objects, least
// privilege RBAC, restricted manager pods; then applies the output to the
// real apiserver with a server-side dry run so every object is valid (a
// manager's overlay after the cluster unit's namespaces, as it is installed).
func TestKustomizeOverlays(t *testing.T) {
	env := testenv.Require(t)
	crds := len(renderOverlay(t, filepath.Join(env.RepoRoot, "manifests", "crd")))
	overlays := []struct {
		name       string
		cluster    bool // carries the cluster unit: CRDs, namespaces, NetworkPolicy
		components []string
	}{
		{name: "cluster", cluster: true},
		{name: "deployments", components: []string{"deployments"}},
		{name: "tasks", components: []string{"tasks"}},
		{name: "workflows", components: []string{"workflows"}},
		{name: "all-in-one", cluster: true, components: managerComponents},
	}
	clusterNamespaces := kindOnly(renderOverlay(t, overlayDir(env.RepoRoot, "cluster")), "Namespace")
	for _, o := range overlays {
		t.Run(o.name, func(t *testing.T) {
			objs := renderOverlay(t, overlayDir(env.RepoRoot, o.name))
			shared := 0
			if o.cluster {
				shared = 1
			}
			assertKinds(t, objs, map[string]int{"CustomResourceDefinition": shared * crds, "Namespace": shared * 2,
				"ServiceMonitor": 0, "NetworkPolicy": shared, "UserRole": shared * 3}, o.components)
			declared := declaredRoles(t, env.RepoRoot)
			for _, obj := range objs {
				assertOnlyDeclaredPermissions(t, obj, declared)
				assertLeastPrivilege(t, obj)
				assertRestrictedPods(t, obj)
			}
			if !o.cluster {
				objs = append(slices.Clone(clusterNamespaces), objs...)
			}
			dryRunApply(t, env, objs)
		})
	}
}

// TestKustomizeClusterUnit checks the split that makes a manager's overlay
// safe to delete (`kubectl delete -k kustomize/overlays/tasks` must not take
// the CRDs, and with them every user's objects and apps): what the managers
// share is in the cluster unit alone, each manager's overlay holds only its
// own objects, and all-in-one is exactly the union.
func TestKustomizeClusterUnit(t *testing.T) {
	root := repoRoot(t)
	cluster := renderOverlay(t, overlayDir(root, "cluster"))
	managers := map[string][]*unstructured.Unstructured{}
	for _, c := range managerComponents {
		managers[c] = renderOverlay(t, overlayDir(root, c))
	}

	t.Run("the cluster unit has every CRD and shared namespace, no manager", func(t *testing.T) {
		want := objectIDs(renderOverlay(t, filepath.Join(root, "manifests", "crd")))
		assert.Equal(t, want, objectIDs(kindOnly(cluster, "CustomResourceDefinition")), "every CRD of manifests/crd")
		assert.ElementsMatch(t, []string{"opsnorth-system", "agent-tasks"}, names(kindOnly(cluster, "Namespace")))
		for _, kind := range []string{"Deployment", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
			objs := slices.DeleteFunc(kindOnly(cluster, kind), isUserRole)
			assert.Empty(t, objectIDs(objs), "the cluster unit holds no manager's %s", kind)
		}
		var userRoles []string
		for _, obj := range kindOnly(cluster, "ClusterRole") {
			userRoles = append(userRoles, obj.GetName())
		}
		assert.ElementsMatch(t, []string{"opsnorth-scheduler-view", "opsnorth-scheduler-edit", "opsnorth-scheduler-approve"}, userRoles,
			"the cluster unit holds the roles people are bound to")
	})

	namespaces := names(kindOnly(cluster, "Namespace"))
	for _, c := range managerComponents {
		t.Run(c+" holds only its manager", func(t *testing.T) {
			objs := managers[c]
			assert.Empty(t, objectIDs(kindOnly(objs, "CustomResourceDefinition")), "a CRD in overlay %s would be deleted with it", c)
			assert.Empty(t, objectIDs(kindOnly(objs, "Namespace")), "a namespace in overlay %s would be deleted with it", c)
			for _, obj := range objs {
				if ns := obj.GetNamespace(); ns != "" {
					assert.Contains(t, namespaces, ns, "%s lives in a namespace the cluster unit does not create", objectID(obj))
				}
			}
			sa := "system:serviceaccount:opsnorth-system:opsnorth-scheduler-" + c
			for _, vap := range kindOnly(objs, "ValidatingAdmissionPolicy") {
				assert.Equal(t, []string{sa}, constrainedUsers(t, vap),
					"policy %s in overlay %s must constrain that manager's ServiceAccount alone", vap.GetName(), c)
			}
		})
	}

	t.Run("shared policies constrain more than one identity", func(t *testing.T) {
		vaps := kindOnly(cluster, "ValidatingAdmissionPolicy")
		assert.NotEmpty(t, vaps)
		for _, vap := range vaps {
			assert.Empty(t, constrainedUsers(t, vap), "policy %s constrains one identity: ship it with that manager", vap.GetName())
		}
	})

	t.Run("no object in two units", func(t *testing.T) {
		owner := map[string]string{}
		units := map[string][]*unstructured.Unstructured{"cluster": cluster}
		maps.Copy(units, managers)
		for _, unit := range slices.Sorted(maps.Keys(units)) {
			for _, obj := range units[unit] {
				id := objectID(obj)
				if other, ok := owner[id]; ok {
					t.Errorf("%s is in both %s and %s: deleting either overlay deletes it for the other", id, other, unit)
				}
				owner[id] = unit
			}
		}
	})

	t.Run("all-in-one is the union, object by object", func(t *testing.T) {
		union := map[string]string{}
		for _, objs := range [][]*unstructured.Unstructured{cluster, managers["deployments"], managers["tasks"], managers["workflows"]} {
			for _, obj := range objs {
				union[objectID(obj)] = toYAML(t, obj)
			}
		}
		all := map[string]string{}
		for _, obj := range renderOverlay(t, overlayDir(root, "all-in-one")) {
			all[objectID(obj)] = toYAML(t, obj)
		}
		assert.Equal(t, slices.Sorted(maps.Keys(union)), slices.Sorted(maps.Keys(all)), "the same objects")
		for id, doc := range all {
			if want, ok := union[id]; ok {
				assert.Equal(t, want, doc, "%s differs between all-in-one and its own unit", id)
			}
		}
	})
}

// constrainedUsers returns the usernames a ValidatingAdmissionPolicy's match
// conditions restrict it to (request.userInfo.username == '<user>'); none
// when it applies to everyone, or to everyone but someone (!=).
func constrainedUsers(t *testing.T, vap *unstructured.Unstructured) []string {
	t.Helper()
	conds, _, err := unstructured.NestedSlice(vap.Object, "spec", "matchConditions")
	require.NoError(t, err)
	var users []string
	for _, c := range conds {
		cond, ok := c.(map[string]any)
		require.True(t, ok, "matchCondition of %s", vap.GetName())
		expr, _ := cond["expression"].(string)
		if m := usernameEquals.FindStringSubmatch(expr); m != nil {
			users = append(users, m[1])
		}
	}
	return users
}

var usernameEquals = regexp.MustCompile(`request\.userInfo\.username\s*==\s*'([^']+)'`)

func overlayDir(root, name string) string { return filepath.Join(root, "kustomize", "overlays", name) }

// objectID is "<kind>.<group> <namespace>/<name>", what kubectl apply and
// delete identify an object by.
func objectID(obj *unstructured.Unstructured) string {
	return obj.GroupVersionKind().GroupKind().String() + " " + obj.GetNamespace() + "/" + obj.GetName()
}

func objectIDs(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, obj := range objs {
		out = append(out, objectID(obj))
	}
	slices.Sort(out)
	return out
}

func kindOnly(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, obj := range objs {
		if obj.GetKind() == kind {
			out = append(out, obj)
		}
	}
	return out
}

func names(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, obj := range objs {
		out = append(out, obj.GetName())
	}
	return out
}

func toYAML(t *testing.T, obj *unstructured.Unstructured) string {
	t.Helper()
	out, err := yaml.Marshal(obj.Object)
	require.NoError(t, err)
	return string(out)
}

// renderOverlay is kustomize build of dir, as unstructured objects.
func renderOverlay(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, res := range renderResources(t, dir) {
		m, err := res.Map()
		require.NoError(t, err)
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

// dryRunApply creates the namespaces for real (a dry run cannot create
// objects in a namespace that does not exist) and server-side applies every
// other object with dryRun=All.
func dryRunApply(t *testing.T, env *testenv.Env, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(env.Config)
	require.NoError(t, err)
	disco, err := discovery.NewDiscoveryClientForConfig(env.Config)
	require.NoError(t, err)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	for _, obj := range objs {
		mapping, err := mapper.RESTMapping(obj.GroupVersionKind().GroupKind(), obj.GroupVersionKind().Version)
		require.NoError(t, err, "mapping for %s", obj.GetKind())
		var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
		}
		opts := metav1.ApplyOptions{FieldManager: "kustomize-test", Force: true, DryRun: []string{metav1.DryRunAll}}
		if obj.GetKind() == "Namespace" {
			opts.DryRun = nil
		}
		_, err = ri.Apply(ctx, obj.GetName(), obj, opts)
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		require.NoError(t, err, "apply %s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
	}
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, obj := range objs {
		if obj.GetKind() == kind && obj.GetName() == name {
			return obj
		}
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }

// renderResources is kustomize build of dir (renderOverlay keeps the
// resources, for their YAML as kustomize prints it).
func renderResources(t *testing.T, dir string) []*resource.Resource {
	t.Helper()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	require.NoError(t, err, "kustomize build %s", dir)
	return resMap.Resources()
}

// withoutComponent writes a copy of the overlay's kustomization.yaml without
// the named component into a temporary directory (its references rewritten
// to lead back to the overlay's) and returns that directory.
func withoutComponent(t *testing.T, overlay, component string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(overlay, "kustomization.yaml"))
	require.NoError(t, err)
	var k types.Kustomization
	require.NoError(t, yaml.UnmarshalStrict(data, &k))
	for _, p := range k.Patches {
		require.Empty(t, p.Path, "patch files cannot be loaded from a copy of the overlay")
	}
	dir := t.TempDir()
	// kustomize refuses absolute roots: point back at the overlay's
	// references relatively from dir.
	rel := func(paths []string) []string {
		out := make([]string, 0, len(paths))
		for _, p := range paths {
			r, err := filepath.Rel(dir, filepath.Join(overlay, p))
			require.NoError(t, err)
			out = append(out, r)
		}
		return out
	}
	before := len(k.Components)
	k.Components = slices.DeleteFunc(rel(k.Components), func(p string) bool { return filepath.Base(p) == component })
	require.Len(t, k.Components, before-1, "overlay %s does not include component %s", overlay, component)
	k.Resources = rel(k.Resources)
	out, err := yaml.Marshal(&k)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), out, 0o600))
	return dir
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	return root
}
