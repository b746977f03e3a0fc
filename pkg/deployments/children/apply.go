// Package children applies and judges the children of the deployments
// manager's long-lived workloads (UserDeployments and Agents): a
// server-side apply only when the cached copy is not already what is
// desired, and when a Deployment has rolled out.
package children

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/pkg/deployments/render"
)

// ConflictError reports a child name already taken by another owner.
type ConflictError struct{ Kind, Name, Owner string }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %s already belongs to %s", e.Kind, e.Name, e.Owner)
}

// Getter returns the cached copy of a child, or nil when it does not exist.
type Getter func(gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error)

// Applier applies children with server-side apply under Owner, skipping
// those whose cached copy already carries the desired hash and every
// desired field.
type Applier struct {
	Client client.Client
	Get    Getter
	Owner  string
}

// Apply applies c unless it is already in place, and reports whether it
// wrote. foreign, if set, names the other owner of a live child that is not
// the caller's ("" when it is): such a child is a ConflictError, never
// overwritten.
func (a *Applier) Apply(ctx context.Context, c render.Child, foreign func(live *unstructured.Unstructured) string) (bool, error) {
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

	live, err := a.Get(c.GVK, c.Namespace, c.Name)
	if err != nil {
		return false, err
	}
	if live != nil {
		if foreign != nil {
			if other := foreign(live); other != "" {
				return false, &ConflictError{Kind: c.GVK.Kind, Name: c.Namespace + "/" + c.Name, Owner: other}
			}
		}
		if live.GetAnnotations()[render.AnnotationAppliedHash] == hash && Contains(live.Object, desired.Object, true) {
			return false, nil
		}
	}
	desired.SetGroupVersionKind(c.GVK)
	if err := a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired),
		client.FieldOwner(a.Owner), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("apply %s %s/%s: %w", c.GVK.Kind, c.Namespace, c.Name, err)
	}
	return true, nil
}

// DeploymentReady reports whether d has rolled out its current spec: every
// wanted replica updated, ready and available, and no old one left.
func DeploymentReady(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	return st.ObservedGeneration >= d.Generation && st.UpdatedReplicas >= want &&
		st.ReadyReplicas >= want && st.AvailableReplicas >= want && st.Replicas <= want
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
func Contains(got, want any, top bool) bool {
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
			if !Contains(g[k], wv, false) {
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
			if !Contains(g[i], w[i], false) {
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
