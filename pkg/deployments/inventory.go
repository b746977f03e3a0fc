package deployments

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"opsnorth.io/scheduler/pkg/deployments/inventory"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// inventorySettle is how long a release waits for objects on their way out
// before it judges them: orphans the garbage collector removes, objects
// whose owner is being deleted, and the counts of Secrets, which the quota
// counts down after the garbage collector deleted the app's.
var inventorySettle = 15 * time.Second

// kindsTTL is how long an inventory that waits trusts its discovery of the
// API's kinds; one that lets a namespace go discovers them afresh.
const kindsTTL = 30 * time.Second

// inventoryWorkers bounds the lists one inventory runs at a time.
const inventoryWorkers = 4

// takeInventory says what in the namespace keeps it: objects the manager
// did not create, its retained claims, kinds it may not list. "" when the
// namespace holds nothing but the manager's own objects and may go. Every
// namespaced kind the API serves is listed (metadata only); Secrets, which
// the manager may not list, are counted by the inventory quota.
func (r *Reconciler) takeInventory(ctx context.Context, userID string, ns *metav1.PartialObjectMetadata) (string, error) {
	if left, err := r.stillSettling(ctx, userID, ns); err != nil || left != "" {
		if err == nil {
			err = &waitingError{what: "namespace " + ns.Name + " to settle (" + left + ")", reason: ReasonTakingInventory}
		}
		return "", err
	}
	kinds, err := r.kinds.Get(kindsTTL)
	if err != nil {
		return "", &waitingError{what: "the API's kinds to be known (" + err.Error() + ")", reason: ReasonTakingInventory}
	}
	kept, err := r.judgeNamespace(ctx, userID, ns, kinds)
	if err != nil || kept != "" {
		return kept, err
	}
	// Letting it go: a kind added since the discovery above must be listed.
	fresh, err := r.kinds.Get(0)
	if err != nil {
		return "", &waitingError{what: "the API's kinds to be known (" + err.Error() + ")", reason: ReasonTakingInventory}
	}
	if !slices.Equal(fresh, kinds) {
		return r.judgeNamespace(ctx, userID, ns, fresh)
	}
	return "", nil
}

// judgeNamespace lists kinds in the namespace and says what keeps it.
func (r *Reconciler) judgeNamespace(ctx context.Context, userID string, ns *metav1.PartialObjectMetadata, kinds []inventory.Kind) (string, error) {
	objs, listed, unlisted, err := r.listAll(ctx, kinds, ns.Name)
	if err != nil {
		return "", err
	}
	if unlisted, err = r.stillServed(unlisted); err != nil {
		return "", err
	}
	in := inventory.Input{Objects: objs, Listed: listed, Mine: managerMade(userID),
		Deletable: func(o inventory.Object) bool { return !render.Retained(o.Meta.Annotations) }}
	v := inventory.Judge(in)
	counted, hidden, err := r.countHidden(ctx, userID, ns, unlisted)
	if err != nil {
		return "", err
	}
	if unsettled := settling(v, counted); unsettled != "" {
		if !r.waitSettling(ns.Name, v, kinds, unlisted) {
			return "", &waitingError{what: "namespace " + ns.Name + " to settle (" + unsettled + ")", reason: ReasonTakingInventory}
		}
		in.Settled = true
		v = inventory.Judge(in)
	}
	r.settling.Delete(ns.Name)
	var parts []string
	if len(v.Foreign) > 0 || len(counted) > 0 {
		held := inventory.Describe(v.Foreign)
		if len(counted) > 0 {
			held = strings.TrimPrefix(held+", "+strings.Join(counted, ", "), ", ")
		}
		parts = append(parts, "it holds objects the manager did not create: "+held)
	}
	if len(v.Claims) > 0 {
		names := make([]string, len(v.Claims))
		for i, c := range v.Claims {
			names[i] = c.Meta.Name
		}
		parts = append(parts, "it holds retained volume claims (storage.whenDeleted: Retain): "+strings.Join(names, ", "))
	}
	if len(hidden) > 0 {
		parts = append(parts, "the manager may not list "+strings.Join(hidden, ", ")+", so it cannot tell whose they are")
	}
	return strings.Join(parts, "; "), nil
}

// stillServed keeps the refused kinds fresh discovery still serves: RBAC
// refuses a list before the API server finds its kind removed.
func (r *Reconciler) stillServed(refused []inventory.Kind) ([]inventory.Kind, error) {
	if len(refused) == 0 {
		return nil, nil
	}
	fresh, err := r.kinds.Get(0)
	if err != nil {
		return nil, &waitingError{what: "the API's kinds to be known (" + err.Error() + ")", reason: ReasonTakingInventory}
	}
	return slices.DeleteFunc(refused, func(k inventory.Kind) bool { return !slices.Contains(fresh, k) }), nil
}

// settling names what may still go by itself; "" when nothing.
func settling(v inventory.Verdict, counted []string) string {
	var out []string
	if len(v.Orphans) > 0 {
		out = append(out, "objects whose owners are gone: "+inventory.Names(v.Orphans))
	}
	if len(v.Pending) > 0 {
		out = append(out, "objects whose owners are being deleted: "+inventory.Names(v.Pending))
	}
	if len(counted) > 0 {
		out = append(out, "counted: "+strings.Join(counted, ", "))
	}
	return strings.Join(out, "; ")
}

// managerMade says whether an object without owners is the manager's: a
// child of one of its apps, the user's quotas and limit range, or what the
// cluster puts in every namespace.
func managerMade(userID string) func(inventory.Object) bool {
	return func(o inventory.Object) bool {
		core := o.GVK.Group == ""
		switch {
		case o.Meta.Annotations[render.AnnotationUserDeployment] != "":
			return true
		case core && o.GVK.Kind == "ConfigMap" && o.Meta.Name == "kube-root-ca.crt",
			core && o.GVK.Kind == "ServiceAccount" && o.Meta.Name == "default":
			return true
		case core && (o.GVK.Kind == "ResourceQuota" || o.GVK.Kind == "LimitRange"):
			return o.Meta.Labels[labelkeys.ManagedBy] == labelkeys.ManagedByValue && o.Meta.Labels[labelkeys.User] == userID
		}
		return false
	}
}

// listAll lists every kind in namespace, a few at a time (liveList: kinds
// gone since discovery hold nothing). Kinds the manager may not list are
// returned as hidden.
func (r *Reconciler) listAll(ctx context.Context, kinds []inventory.Kind, namespace string) ([]inventory.Object, map[schema.GroupKind]bool, []inventory.Kind, error) {
	var (
		mu     sync.Mutex
		objs   []inventory.Object
		hidden []inventory.Kind
		errs   []error
		wg     sync.WaitGroup
	)
	listed := map[schema.GroupKind]bool{}
	next := make(chan inventory.Kind)
	for range inventoryWorkers {
		wg.Go(func() {
			for k := range next {
				items, err := r.liveList(ctx, k.GVK, namespace, labels.Everything())
				mu.Lock()
				switch {
				case apierrors.IsForbidden(err):
					hidden = append(hidden, k)
				case apierrors.IsMethodNotSupported(err):
				case err != nil:
					errs = append(errs, err)
				default:
					listed[k.GVK.GroupKind()] = true
					for _, it := range items {
						objs = append(objs, inventory.Object{GVK: k.GVK, Meta: it.ObjectMeta})
					}
				}
				mu.Unlock()
			}
		})
	}
	for _, k := range kinds {
		next <- k
	}
	close(next)
	wg.Wait()
	if len(errs) > 0 {
		return nil, nil, nil, errs[0]
	}
	slices.SortFunc(hidden, func(a, b inventory.Kind) int { return strings.Compare(a.String(), b.String()) })
	return objs, listed, hidden, nil
}
