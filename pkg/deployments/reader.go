package deployments

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// childReader reads children from the manager's label-filtered caches:
// built-in kinds from controller-runtime's cache (typed, then converted),
// third-party kinds from dynamic informers. It never calls the apiserver.
type childReader struct {
	cache   client.Reader
	scheme  *runtime.Scheme
	listers map[schema.GroupVersionKind]toolscache.GenericLister
}

// get returns the cached child, or nil when it does not exist.
func (r *childReader) get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	if l, ok := r.listers[gvk]; ok {
		var (
			obj runtime.Object
			err error
		)
		if namespace == "" {
			obj, err = l.Get(name)
		} else {
			obj, err = l.ByNamespace(namespace).Get(name)
		}
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("get %s %s/%s: %w", gvk.Kind, namespace, name, err)
		}
		return obj.(*unstructured.Unstructured), nil
	}
	typed, err := r.scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("no type for %s: %w", gvk, err)
	}
	obj := typed.(client.Object)
	if err := r.cache.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get %s %s/%s: %w", gvk.Kind, namespace, name, err)
	}
	return toUnstructured(obj)
}

// list returns the cached children of a kind in namespace matching sel.
func (r *childReader) list(ctx context.Context, gvk schema.GroupVersionKind, namespace string, sel labels.Selector) ([]*unstructured.Unstructured, error) {
	if l, ok := r.listers[gvk]; ok {
		objs, err := l.ByNamespace(namespace).List(sel)
		if err != nil {
			return nil, fmt.Errorf("list %s in %s: %w", gvk.Kind, namespace, err)
		}
		out := make([]*unstructured.Unstructured, 0, len(objs))
		for _, o := range objs {
			out = append(out, o.(*unstructured.Unstructured))
		}
		return out, nil
	}
	typed, err := r.scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return nil, fmt.Errorf("no list type for %s: %w", gvk, err)
	}
	list := typed.(client.ObjectList)
	if err := r.cache.List(ctx, list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("list %s in %s: %w", gvk.Kind, namespace, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("extract %s list: %w", gvk.Kind, err)
	}
	out := make([]*unstructured.Unstructured, 0, len(items))
	for _, it := range items {
		u, err := toUnstructured(it)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %T: %w", obj, err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}
