package deployments

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"opsnorth.io/scheduler/pkg/deployments/render"
)

// inventorySettle is how long a release waits for counted objects to go
// before it calls them someone else's: the Secrets of the app's
// ExternalSecrets go by garbage collection, and the quota counts them down
// after that.
var inventorySettle = 15 * time.Second

// inventoryFresh is how soon after its namespace an inventory quota must
// exist for a count it has not computed yet to mean zero (quota admission
// refuses every create of a kind whose count is not computed).
const inventoryFresh = 30 * time.Second

// takeInventory says what in the namespace the manager did not create, or
// keeps (retained claims): "" when the namespace holds nothing but the
// manager's own objects and may go. Kinds the manager may list are listed;
// the others (Secrets among them) are counted by the inventory quota.
func (r *Reconciler) takeInventory(ctx context.Context, userID string, ns *metav1.PartialObjectMetadata) (string, error) {
	var foreign, retained []string
	for _, gvk := range r.appKinds() {
		objs, err := r.liveList(ctx, gvk, ns.Name, labels.Everything())
		if err != nil {
			return "", err
		}
		for _, o := range objs {
			switch {
			case o.DeletionTimestamp != nil, len(o.OwnerReferences) > 0,
				gvk == render.GVKConfigMap && o.Name == "kube-root-ca.crt":
				// Going, going with its owner, or the cluster's own.
			case o.Annotations[render.AnnotationUserDeployment] == "":
				foreign = append(foreign, gvk.Kind+" "+o.Name)
			case gvk == render.GVKPVC:
				retained = append(retained, o.Name)
			}
		}
	}
	counted, err := r.countForeign(ctx, userID, ns)
	if err != nil {
		return "", err
	}
	foreign = append(foreign, counted...)
	var parts []string
	if len(foreign) > 0 {
		parts = append(parts, "it holds objects the manager did not create: "+strings.Join(foreign, ", "))
	}
	if len(retained) > 0 {
		parts = append(parts, "it holds retained volume claims (storage.whenDeleted: Retain): "+strings.Join(retained, ", "))
	}
	return strings.Join(parts, "; "), nil
}

// countForeign reads the inventory quota's counts above the cluster's
// baseline, waiting (inventorySettle) for counts that may still fall.
func (r *Reconciler) countForeign(ctx context.Context, userID string, ns *metav1.PartialObjectMetadata) ([]string, error) {
	u, err := r.reader.Get(render.GVKResourceQuota, ns.Name, render.InventoryName)
	if err != nil {
		return nil, err
	}
	if u == nil {
		// A sibling release that deleted the namespace removes its
		// inventory too: then there is nothing left to count.
		live, err := r.liveNamespace(ctx, ns.Name)
		if err != nil || live == nil || live.DeletionTimestamp != nil {
			return nil, err
		}
		// Created before the inventory existed: count from now on.
		if _, err := r.apply.apply(ctx, render.Inventory(ns.Name, userID), ""); err != nil {
			return nil, err
		}
		return nil, &waitingError{what: "the new inventory quota of namespace " + ns.Name + " to count its objects", reason: ReasonTakingInventory}
	}
	var q corev1.ResourceQuota
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &q); err != nil {
		return nil, fmt.Errorf("read quota %s/%s: %w", ns.Name, render.InventoryName, err)
	}
	fresh := q.CreationTimestamp.Sub(ns.CreationTimestamp.Time) < inventoryFresh
	var out []string
	for _, name := range slices.Sorted(maps.Keys(render.InventoryCounts)) {
		c := render.InventoryCounts[name]
		used, ok := q.Status.Used[name]
		if !ok && !fresh {
			return nil, &waitingError{what: "the inventory quota of namespace " + ns.Name + " to count " + c.Kind + "s", reason: ReasonTakingInventory}
		}
		if n := used.Value() - c.Baseline; n > 0 {
			out = append(out, fmt.Sprintf("%d %s", n, c.Kind))
		}
	}
	if len(out) == 0 {
		r.settling.Delete(ns.Name)
		return nil, nil
	}
	first, _ := r.settling.LoadOrStore(ns.Name, r.now())
	if r.now().Sub(first.(time.Time)) < inventorySettle {
		return nil, &waitingError{what: "the counts of namespace " + ns.Name + " to settle before keeping it for them (" + strings.Join(out, ", ") + ")",
			reason: ReasonTakingInventory}
	}
	return out, nil
}
