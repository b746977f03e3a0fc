package deployments

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// ensureNamespace creates or updates the user namespace, its quotas and its
// limit range. An existing namespace is used only when the manager created
// it for this user or the platform bound it to this user (render.Adoption);
// anything else stalls with NamespaceNotOwned and nothing is written. The
// tier quota follows the most generous tier among the user's active
// deployments, so several deployments never fight over it.
func (r *Reconciler) ensureNamespace(ctx context.Context, s *scope) (bool, error) {
	name := s.status.Namespace
	ns, err := r.namespace(ctx, name)
	if err != nil {
		return true, err
	}
	created, restore := true, ""
	if ns != nil {
		if ns.DeletionTimestamp != nil {
			return true, &waitingError{what: "the terminating namespace " + name + " to disappear", reason: ReasonNamespaceTerminating}
		}
		if created, restore, err = render.Adoption(name, s.ud.Spec.UserID, ns.Labels, ns.Annotations); err != nil {
			return true, stalled(ReasonNamespaceNotOwned, err.Error())
		}
	}
	tierName, tier := r.userTier(s.ud)
	children := []render.Child{render.Namespace(name, s.ud.Spec.UserID, created, restore)}
	if created {
		// Before anything else lands in the namespace, so it counts everything.
		children = append(children, render.Inventory(name, s.ud.Spec.UserID))
	}
	children = append(children, render.Quota(name, s.ud.Spec.UserID, tierName, tier),
		render.LimitRange(name, s.ud.Spec.UserID, tierName, tier), render.AffinityQuota(name, s.ud.Spec.UserID))
	for _, c := range children {
		wrote, err := r.apply.apply(ctx, c, "")
		if err != nil {
			return true, err
		}
		s.wrote = s.wrote || wrote
	}
	return false, nil
}

// namespace returns the namespace's metadata, from the cache when it is
// the manager's, else live; nil when it does not exist.
func (r *Reconciler) namespace(ctx context.Context, name string) (*metav1.PartialObjectMetadata, error) {
	live, err := r.reader.Get(render.GVKNamespace, "", name)
	if err != nil {
		return nil, err
	}
	if live != nil {
		ns := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: live.GetLabels(),
			Annotations: live.GetAnnotations(), DeletionTimestamp: live.GetDeletionTimestamp(), CreationTimestamp: live.GetCreationTimestamp()}}
		ns.SetGroupVersionKind(render.GVKNamespace)
		return ns, nil
	}
	return r.liveNamespace(ctx, name)
}

// liveNamespace reads the namespace's metadata from the API server.
func (r *Reconciler) liveNamespace(ctx context.Context, name string) (*metav1.PartialObjectMetadata, error) {
	var ns metav1.PartialObjectMetadata
	ns.SetGroupVersionKind(render.GVKNamespace)
	err := r.apiReader.Get(ctx, client.ObjectKey{Name: name}, &ns)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get namespace %s: %w", name, err)
	}
	return &ns, nil
}

func (r *Reconciler) userTier(ud *v1alpha1.UserDeployment) (string, tiers.Tier) {
	best, bestTier := ud.Spec.Tier, r.cfg.Tiers[ud.Spec.Tier]
	for _, other := range r.byIndex(indexUser, ud.Spec.UserID) {
		t, ok := r.cfg.Tiers[other.Spec.Tier]
		if !ok || releasing(other) {
			continue
		}
		if t.MaxReplicas > bestTier.MaxReplicas || (t.MaxReplicas == bestTier.MaxReplicas && other.Spec.Tier < best) {
			best, bestTier = other.Spec.Tier, t
		}
	}
	return best, bestTier
}

// releaseNamespace gives the user namespace back once no active deployment
// of the user remains. A namespace the platform bound gets its labels back
// exactly as they were and loses the quota and limit range. A namespace the
// manager created is deleted only when nothing but the manager's own objects
// is left in it; otherwise it is kept as it is, and an Event and the final
// status say what was kept and why.
func (r *Reconciler) releaseNamespace(ctx context.Context, s *scope) (bool, error) {
	for _, other := range r.byIndex(indexUser, s.ud.Spec.UserID) {
		if other.UID != s.ud.UID && !releasing(other) {
			return false, nil
		}
	}
	name := s.status.Namespace
	// Live, not cached: the user's other deployments release at the same
	// time, and one of them may have deleted the namespace a moment ago.
	ns, err := r.liveNamespace(ctx, name)
	if err != nil || ns == nil {
		return err != nil, err
	}
	if ns.DeletionTimestamp != nil || ns.Labels[labelkeys.ManagedBy] != labelkeys.ManagedByValue {
		return false, nil
	}
	if ns.Annotations[render.AnnotationCreatedNamespace] == "" {
		return r.restoreNamespace(ctx, s, ns)
	}
	kept, err := r.takeInventory(ctx, s.ud.Spec.UserID, ns)
	if err != nil {
		return true, err
	}
	if kept != "" {
		s.kept = fmt.Sprintf("namespace %s kept: %s", name, kept)
		return false, nil
	}
	// The namespace first, so the user's other deployments releasing at the
	// same time see it terminating rather than its inventory gone; then its
	// quotas and limit range, which the namespace controller would also remove.
	if err := r.deleteObject(ctx, render.GVKNamespace, "", name); err != nil {
		return true, err
	}
	s.wrote = true
	return false, r.removeUserObjects(ctx, s, name)
}

// removeUserObjects deletes the user's quotas and limit range in namespace.
func (r *Reconciler) removeUserObjects(ctx context.Context, s *scope, namespace string) error {
	userSel := labels.SelectorFromSet(labels.Set{labelkeys.User: s.ud.Spec.UserID, labelkeys.ManagedBy: labelkeys.ManagedByValue})
	for _, gvk := range []schema.GroupVersionKind{render.GVKResourceQuota, render.GVKLimitRange} {
		objs, err := r.liveList(ctx, gvk, namespace, userSel)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if o.DeletionTimestamp == nil {
				if err := r.deleteObject(ctx, gvk, o.Namespace, o.Name); err != nil {
					return err
				}
				s.wrote = true
			}
		}
	}
	return nil
}

// restoreNamespace removes the user's quota and limit range from a
// namespace the manager did not create and gives its labels back.
func (r *Reconciler) restoreNamespace(ctx context.Context, s *scope, ns *metav1.PartialObjectMetadata) (bool, error) {
	if err := r.removeUserObjects(ctx, s, ns.Name); err != nil {
		return true, err
	}
	record := ns.Annotations[render.AnnotationRestore]
	if record == "" {
		// Adopted before restore records existed: drop the labels the manager applied.
		if err := r.client.Apply(ctx, corev1ac.Namespace(ns.Name), client.FieldOwner(r.owner), client.ForceOwnership); err != nil {
			return true, fmt.Errorf("release namespace %s: %w", ns.Name, err)
		}
		s.wrote = true
		return false, nil
	}
	patch, err := render.RestorePatch(record)
	if err != nil {
		return true, stalled(ReasonInvalidSpec, fmt.Sprintf("namespace %s: %v", ns.Name, err))
	}
	var obj metav1.PartialObjectMetadata
	obj.SetGroupVersionKind(render.GVKNamespace)
	obj.SetName(ns.Name)
	if err := r.client.Patch(ctx, &obj, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(r.owner)); err != nil {
		return true, fmt.Errorf("restore the labels of namespace %s: %w", ns.Name, err)
	}
	s.wrote = true
	return false, nil
}
