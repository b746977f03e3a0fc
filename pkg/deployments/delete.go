package deployments

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// waitingError asks for a quick retry (retryWaiting) while something
// settles: children just deleted, a terminating namespace, the inventory's
// counts. A wait with a reason is shown in the status (its message is the
// cause); one without is only logged, as its end follows in a moment.
type waitingError struct{ what, reason string }

func (e *waitingError) Error() string { return "waiting for " + e.what }

// deleteChildren deletes every child of the deployment, read live from the
// apiserver (not the cache) so nothing just created is missed. Kinds whose
// CRD is not installed have nothing to delete.
func (r *Reconciler) deleteChildren(ctx context.Context, s *scope) (bool, error) {
	if s.status.Phase != v1alpha1.PhaseDeleted {
		s.summarize(v1alpha1.PhaseDeleting, conditions.InProgress, ReasonDeleting, "removing every child")
	}
	deleted := 0
	s.status.RetainedClaims = nil
	for _, gvk := range render.AppKinds {
		objs, err := r.liveList(ctx, gvk, s.status.Namespace, appChildSelector(s.ud))
		if err != nil {
			return true, err
		}
		for _, o := range objs {
			// Terminating objects are on their way out: finalizers such as
			// pvc-protection are the cluster's to resolve.
			if o.Annotations[render.AnnotationUserDeployment] != render.Key(s.ud) || o.DeletionTimestamp != nil {
				continue
			}
			if gvk == render.GVKPVC && render.Retained(o.Annotations) {
				s.status.RetainedClaims = append(s.status.RetainedClaims, o.Name)
				continue
			}
			if err := r.deleteObject(ctx, gvk, o.Namespace, o.Name); err != nil {
				return true, err
			}
			deleted++
		}
	}
	if deleted > 0 {
		s.wrote = true
		// Confirm on the next pass, from a fresh list, that nothing is left.
		return true, &waitingError{what: fmt.Sprintf("%d deleted children to disappear", deleted)}
	}
	return false, nil
}

// markDeleted reports phase deleted.
func (r *Reconciler) markDeleted(_ context.Context, s *scope) (bool, error) {
	s.status.Ingresses = nil
	s.status.ReadyReplicas = 0
	reason, msg := ReasonDeleted, "every child removed"
	if len(s.status.RetainedClaims) > 0 {
		reason, msg = ReasonClaimsRetained, "every child removed except the retained volume claims "+strings.Join(s.status.RetainedClaims, ", ")
	}
	if s.kept != "" {
		reason, msg = ReasonNamespaceKept, msg+"; "+s.kept
	}
	s.summarize(v1alpha1.PhaseDeleted, conditions.Current, reason, msg)
	// What was kept outlives the status of a deleted object: say it in an
	// Event too, once.
	if c := meta.FindStatusCondition(s.ud.Status.Conditions, v1alpha1.ConditionReady); reason != ReasonDeleted && (c == nil || c.Message != msg) {
		r.recorder.Eventf(s.ud, nil, corev1.EventTypeWarning, reason, "Delete", "%s", msg)
	}
	return false, nil
}

func (r *Reconciler) liveList(ctx context.Context, gvk schema.GroupVersionKind, namespace string, sel labels.Selector) ([]metav1.PartialObjectMetadata, error) {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	err := r.apiReader.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel})
	if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
		return nil, nil // CRD not installed: nothing of the kind exists.
	}
	if err != nil {
		return nil, fmt.Errorf("list %s in %s: %w", gvk.Kind, namespace, err)
	}
	return list.Items, nil
}

func (r *Reconciler) deleteObject(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) error {
	var obj metav1.PartialObjectMetadata
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace(namespace)
	obj.SetName(name)
	if err := client.IgnoreNotFound(r.client.Delete(ctx, &obj, client.PropagationPolicy(metav1.DeletePropagationBackground))); err != nil {
		return fmt.Errorf("delete %s %s/%s: %w", gvk.Kind, namespace, name, err)
	}
	return nil
}

func (r *Reconciler) appKinds() []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, 0, len(render.AppKinds))
	for _, gvk := range render.AppKinds {
		switch gvk {
		case render.GVKIngressRoute:
			if !r.caps.IngressRoute {
				continue
			}
		case render.GVKExternalSecret:
			if !r.caps.ExternalSecret {
				continue
			}
		case render.GVKServiceMonitor:
			if !r.caps.ServiceMonitor {
				continue
			}
		}
		out = append(out, gvk)
	}
	return out
}

// appChildSelector selects the children labelled with ud's key (its label
// form); callers also check the owner annotation, which holds the full key.
func appChildSelector(ud *v1alpha1.UserDeployment) labels.Selector {
	return labels.SelectorFromSet(labels.Set{labelkeys.UserDeployment: render.KeyLabel(render.Key(ud))})
}

// getDeployment returns the cached Deployment, or nil when there is none.
func (r *Reconciler) getDeployment(namespace, name string) (*appsv1.Deployment, error) {
	d, err := r.deployments.Deployments(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get Deployment %s/%s: %w", namespace, name, err)
	}
	return d, nil
}

var retryWaiting = 2 * time.Second
