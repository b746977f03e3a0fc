package children

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
)

// Reader reads children from the label-selected informers of their kind:
// typed for built-in kinds, unstructured for third-party ones. It never
// calls the API server.
type Reader struct {
	// Listers are the caches, by kind; add one per kind before use.
	Listers map[schema.GroupVersionKind]toolscache.GenericLister
}

// Get returns the cached child, or nil when it does not exist.
func (r *Reader) Get(gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	l, err := r.lister(gvk)
	if err != nil {
		return nil, err
	}
	var obj runtime.Object
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
	return toUnstructured(obj)
}

// List returns the cached children of a kind in namespace matching sel.
func (r *Reader) List(gvk schema.GroupVersionKind, namespace string, sel labels.Selector) ([]*unstructured.Unstructured, error) {
	l, err := r.lister(gvk)
	if err != nil {
		return nil, err
	}
	objs, err := l.ByNamespace(namespace).List(sel)
	if err != nil {
		return nil, fmt.Errorf("list %s in %s: %w", gvk.Kind, namespace, err)
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		u, err := toUnstructured(o)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

func (r *Reader) lister(gvk schema.GroupVersionKind) (toolscache.GenericLister, error) {
	l, ok := r.Listers[gvk]
	if !ok {
		return nil, fmt.Errorf("no informer for %s", gvk)
	}
	return l, nil
}

// toUnstructured returns a copy of a cached object as unstructured, so no
// caller can change the cache. Typed objects from informers carry no kind,
// and their copies none either: callers know the kind they asked for.
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.DeepCopy(), nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %T: %w", obj, err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}
