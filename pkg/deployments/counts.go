package deployments

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"opsnorth.io/scheduler/pkg/deployments/inventory"
	"opsnorth.io/scheduler/pkg/deployments/render"
)

// inventoryFresh is how soon after its namespace an inventory quota must
// exist for a count it has not computed yet to mean zero (quota admission
// refuses every create of a kind whose count is not computed).
const inventoryFresh = 30 * time.Second

// countHidden reads, for the kinds the manager may not list, the inventory
// quota's counts above the cluster's baseline. It returns those counts
// ("2 Secret") and the kinds it neither listed nor counted.
func (r *Reconciler) countHidden(ctx context.Context, userID string, ns *metav1.PartialObjectMetadata, hidden []inventory.Kind) ([]string, []string, error) {
	var uncounted []string
	var counts []render.InventoryCount
	var names []corev1.ResourceName
	for _, k := range hidden {
		name, c, ok := render.InventoryCountOf(k.GVK.GroupKind())
		if !ok {
			uncounted = append(uncounted, k.String())
			continue
		}
		counts, names = append(counts, c), append(names, name)
	}
	if len(counts) == 0 {
		return nil, uncounted, nil
	}
	q, err := r.inventoryQuota(ctx, userID, ns)
	if err != nil || q == nil {
		return nil, uncounted, err
	}
	fresh := q.CreationTimestamp.Sub(ns.CreationTimestamp.Time) < inventoryFresh
	var out []string
	for i, name := range names {
		used, ok := q.Status.Used[name]
		if !ok && !fresh {
			return nil, nil, &waitingError{what: "the inventory quota of namespace " + ns.Name + " to count " + counts[i].Kind + "s", reason: ReasonTakingInventory}
		}
		if n := used.Value() - counts[i].Baseline; n > 0 {
			out = append(out, fmt.Sprintf("%d %s", n, counts[i].Kind))
		}
	}
	return out, uncounted, nil
}

// inventoryQuota reads the namespace's inventory quota; nil when a sibling
// release deleted the namespace. A namespace created before the inventory
// existed gets one, and counts from then on.
func (r *Reconciler) inventoryQuota(ctx context.Context, userID string, ns *metav1.PartialObjectMetadata) (*corev1.ResourceQuota, error) {
	u, err := r.reader.Get(render.GVKResourceQuota, ns.Name, render.InventoryName)
	if err != nil {
		return nil, err
	}
	if u == nil {
		live, err := r.liveNamespace(ctx, ns.Name)
		if err != nil || live == nil || live.DeletionTimestamp != nil {
			return nil, err
		}
		if _, err := r.apply.apply(ctx, render.Inventory(ns.Name, userID), ""); err != nil {
			return nil, err
		}
		return nil, &waitingError{what: "the new inventory quota of namespace " + ns.Name + " to count its objects", reason: ReasonTakingInventory}
	}
	var q corev1.ResourceQuota
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &q); err != nil {
		return nil, fmt.Errorf("read quota %s/%s: %w", ns.Name, render.InventoryName, err)
	}
	return &q, nil
}
