package deployments

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"opsnorth.io/scheduler/pkg/deployments/children"
	"opsnorth.io/scheduler/pkg/deployments/render"
)

// ConflictError reports a child name already taken by another owner.
type ConflictError = children.ConflictError

// applier applies a UserDeployment's children (children.Applier).
type applier struct{ children.Applier }

// apply applies c unless it is already in place; owner, when set, is the
// "<namespace>.<name>" the child must belong to. It reports whether it wrote.
func (a *applier) apply(ctx context.Context, c render.Child, owner string) (bool, error) {
	var foreign func(*unstructured.Unstructured) string
	if owner != "" {
		foreign = func(live *unstructured.Unstructured) string {
			if got := live.GetAnnotations()[render.AnnotationUserDeployment]; got != "" && got != owner {
				return got
			}
			return ""
		}
	}
	return a.Apply(ctx, c, foreign)
}
