package localcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

// FieldManager is the server-side apply field owner of what the cluster applies.
const FieldManager = "opsnorth-localcluster"

// ManifestFiles expands glob patterns (e.g. "manifests/crd/*.yaml") into a
// sorted list of object files. kustomization.yaml files, kustomize's own
// configuration rather than cluster objects, are left out. A pattern matching
// no object file is an error, so a renamed directory does not silently
// install nothing.
func ManifestFiles(patterns ...string) ([]string, error) {
	var files []string
	for _, pat := range patterns {
		m, err := filepath.Glob(pat)
		if err != nil {
			return nil, fmt.Errorf("glob %s: %w", pat, err)
		}
		m = slices.DeleteFunc(m, isKustomization)
		if len(m) == 0 {
			return nil, fmt.Errorf("no manifest files match %s", pat)
		}
		sort.Strings(m)
		files = append(files, m...)
	}
	return files, nil
}

func isKustomization(path string) bool {
	switch filepath.Base(path) {
	case "kustomization.yaml", "kustomization.yml", "Kustomization":
		return true
	}
	return false
}

// Apply server-side applies every object of the YAML files, in order, as the
// admin (field manager FieldManager, forcing ownership), and waits until
// every CustomResourceDefinition among them is Established, so objects of its
// kind can be applied next. It returns the number of objects applied.
func (c *Cluster) Apply(ctx context.Context, files ...string) (int, error) {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Clientset.Discovery()))
	var crds []string
	n := 0
	for _, f := range files {
		docs, err := readDocuments(f)
		if err != nil {
			return n, err
		}
		for _, doc := range docs {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
				return n, fmt.Errorf("parse %s: %w", f, err)
			}
			if len(obj.Object) == 0 {
				continue
			}
			if obj.GetKind() == "" || obj.GetAPIVersion() == "" {
				return n, fmt.Errorf("%s: a document without apiVersion and kind", f)
			}
			if err := c.applyObject(ctx, mapper, obj); err != nil {
				return n, fmt.Errorf("apply %s from %s: %w", describe(obj), f, err)
			}
			n++
			if obj.GroupVersionKind().GroupKind() == apiextensionsv1.Kind("CustomResourceDefinition") {
				crds = append(crds, obj.GetName())
			}
		}
	}
	for _, name := range crds {
		if err := c.waitEstablished(ctx, name); err != nil {
			return n, err
		}
	}
	return n, nil
}

func describe(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return obj.GetKind() + " " + ns + "/" + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetName()
}

func (c *Cluster) applyObject(ctx context.Context, mapper *restmapper.DeferredDiscoveryRESTMapper, obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		// A kind whose CRD was applied earlier in this call: rediscover.
		mapper.Reset()
		mapping, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return fmt.Errorf("map %s: %w", gvk, err)
	}
	data, err := runtime.Encode(unstructured.UnstructuredJSONScheme, obj)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	res := c.Dynamic.Resource(mapping.Resource)
	opts := metav1.PatchOptions{FieldManager: FieldManager, Force: new(true)}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := obj.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		_, err = res.Namespace(ns).Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
	} else {
		_, err = res.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
	}
	if err != nil {
		return fmt.Errorf("server-side apply: %w", err)
	}
	return nil
}

func (c *Cluster) waitEstablished(ctx context.Context, name string) error {
	crds := c.Dynamic.Resource(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"))
	return poll(ctx, "CRD "+name+" Established", func(ctx context.Context) (bool, error) {
		u, err := crds.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("get CRD %s: %w", name, err)
		}
		conds, _, err := unstructured.NestedSlice(u.Object, "status", "conditions")
		if err != nil {
			return false, fmt.Errorf("read CRD %s conditions: %w", name, err)
		}
		for _, raw := range conds {
			cond, _ := raw.(map[string]any)
			if cond["type"] == string(apiextensionsv1.Established) && cond["status"] == string(apiextensionsv1.ConditionTrue) {
				return true, nil
			}
		}
		return false, nil
	})
}
