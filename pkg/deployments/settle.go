package deployments

import (
	"context"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"opsnorth.io/scheduler/pkg/deployments/inventory"
)

// settleState is what an inventory waits for in one namespace: objects on
// their way out (by uid, with their kinds) and hidden kinds' counts. While
// they settle, a pass looks at them alone; a full inventory follows once
// they went, or when inventorySettle is over.
type settleState struct {
	since  time.Time
	uids   map[types.UID]bool
	kinds  []inventory.Kind
	hidden []inventory.Kind // kinds it may not list, some counted by the quota
}

// waitSettling records what settles in namespace, keeping the time the
// wait began; it reports whether the wait is over.
func (r *Reconciler) waitSettling(namespace string, v inventory.Verdict, kinds, hidden []inventory.Kind) bool {
	st := settleState{since: r.now(), uids: map[types.UID]bool{}, hidden: hidden}
	if old, ok := r.settling.Load(namespace); ok {
		st.since = old.(settleState).since
	}
	byKind := map[string]bool{}
	for _, o := range append(v.Orphans, v.Pending...) {
		st.uids[o.Meta.UID] = true
		byKind[o.GVK.GroupKind().String()] = true
	}
	for _, k := range kinds {
		if byKind[k.GVK.GroupKind().String()] {
			st.kinds = append(st.kinds, k)
		}
	}
	r.settling.Store(namespace, st)
	return r.now().Sub(st.since) >= inventorySettle
}

// stillSettling names what the last inventory of namespace waited for and
// is still there, looking at that alone: "" when there was nothing, it
// went, or the wait is over, and a full inventory is due.
func (r *Reconciler) stillSettling(ctx context.Context, userID string, ns *metav1.PartialObjectMetadata) (string, error) {
	v, ok := r.settling.Load(ns.Name)
	if !ok {
		return "", nil
	}
	st := v.(settleState)
	if r.now().Sub(st.since) >= inventorySettle {
		return "", nil
	}
	objs, _, _, err := r.listAll(ctx, st.kinds, ns.Name)
	if err != nil {
		return "", err
	}
	var left []inventory.Object
	for _, o := range objs {
		if st.uids[o.Meta.UID] && o.Meta.DeletionTimestamp == nil {
			left = append(left, o)
		}
	}
	counts, _, err := r.countHidden(ctx, userID, ns, st.hidden)
	if err != nil || (len(left) == 0 && len(counts) == 0) {
		return "", err
	}
	var out []string
	if len(left) > 0 {
		out = append(out, "objects on their way out: "+inventory.Names(left))
	}
	if len(counts) > 0 {
		out = append(out, "counted: "+strings.Join(counts, ", "))
	}
	return strings.Join(out, "; "), nil
}
