package deployments

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/pkg/deployments/render"
)

// ConflictError reports a child name already taken by another owner.
type ConflictError struct{ Kind, Name, Owner string }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %s already belongs to %s", e.Kind, e.Name, e.Owner)
}

// applier applies children with server-side apply, skipping those whose
// cached copy already carries the desired hash and every desired field.
type applier struct {
	client client.Client
	reader *childReader
	owner  string
}

// apply applies c unless it is already in place; owner, when set, is the
// "<namespace>.<name>" the child must belong to. It reports whether it wrote.
func (a *applier) apply(ctx context.Context, c render.Child, owner string) (bool, error) {
	desired, err := c.Unstructured()
	if err != nil {
		return false, err
	}
	hash, err := hashOf(desired)
	if err != nil {
		return false, err
	}
	ann := desired.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[render.AnnotationAppliedHash] = hash
	desired.SetAnnotations(ann)

	live, err := a.reader.get(c.GVK, c.Namespace, c.Name)
	if err != nil {
		return false, err
	}
	if live != nil {
		if got := live.GetAnnotations()[render.AnnotationUserDeployment]; owner != "" && got != "" && got != owner {
			return false, &ConflictError{Kind: c.GVK.Kind, Name: c.Namespace + "/" + c.Name, Owner: got}
		}
		if live.GetAnnotations()[render.AnnotationAppliedHash] == hash && contains(live.Object, desired.Object, true) {
			return false, nil
		}
	}
	desired.SetGroupVersionKind(c.GVK)
	if err := a.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired),
		client.FieldOwner(a.owner), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("apply %s %s/%s: %w", c.GVK.Kind, c.Namespace, c.Name, err)
	}
	return true, nil
}

func hashOf(u *unstructured.Unstructured) (string, error) {
	data, err := json.Marshal(u.Object) // map keys are sorted: stable.
	if err != nil {
		return "", fmt.Errorf("hash %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return render.Hash(string(data), 16), nil
}

// contains reports whether every field of want is in got with the same
// value: the live object may carry defaults and others' fields, but drift in
// a field the manager sets shows. An empty wanted map or list matches a
// missing one; a wanted null matches anything.
func contains(got, want any, top bool) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return len(w) == 0 && got == nil
		}
		for k, wv := range w {
			if top && (k == "apiVersion" || k == "kind") {
				continue
			}
			if !contains(g[k], wv, false) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok {
			return len(w) == 0 && got == nil
		}
		if len(g) != len(w) {
			return false
		}
		for i := range w {
			if !contains(g[i], w[i], false) {
				return false
			}
		}
		return true
	case nil:
		return true
	default:
		return scalarEqual(got, want)
	}
}

func scalarEqual(got, want any) bool {
	if gf, ok := number(got); ok {
		wf, ok := number(want)
		return ok && gf == wf
	}
	return reflect.DeepEqual(got, want)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
