package agents

import (
	"context"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/manager"
)

// checkTier refuses an Agent above its namespace's tier (CheckTier), or in
// a namespace whose tier is unknown; both delete its children.
func (r *Reconciler) checkTier(_ context.Context, s *scope) (bool, error) {
	var label string
	if obj, ok, err := r.namespaces.GetByKey(s.agent.Namespace); err == nil && ok {
		label = obj.(*corev1.Namespace).Labels[labelkeys.MaxTier]
	}
	name, t, err := NamespaceTier(r.cfg.Tiers, s.agent.Namespace, label, r.cfg.DefaultMaxTier)
	if err != nil {
		return true, stalled(ReasonUnknownTier, err.Error(), true)
	}
	if err := CheckTier(s.agent, name, t); err != nil {
		return true, stalled(ReasonTierLimitExceeded, err.Error(), true)
	}
	s.tierName, s.tier = name, t
	return false, nil
}

// applyTierObjects applies the namespace's tier quota and limit range
// (TierObjects) before any pod runs. In a user namespace the UserDeployment
// controller keeps them (labelled scheduler.opsnorth.io/user, same names and
// field owner): they are left as they are, never doubled.
func (r *Reconciler) applyTierObjects(ctx context.Context, s *scope) (bool, error) {
	for _, c := range TierObjects(s.agent.Namespace, s.tierName, s.tier, s.peers) {
		live, err := r.reader.Get(c.GVK, c.Namespace, c.Name)
		if err != nil {
			return true, err
		}
		if live != nil && live.GetLabels()[labelkeys.User] != "" {
			continue
		}
		wrote, err := r.tierApply.Apply(ctx, c, nil)
		if err != nil {
			return true, err
		}
		s.wrote = s.wrote || wrote
	}
	return false, nil
}

// TierObjects are the tier's ResourceQuota and LimitRange of a namespace
// (render.TierQuota, render.TierLimitRange: one name, render.UserChildName,
// per namespace), shared by its Agents (agents, sorted by uid, those being
// deleted left out), each an owner, not the controller: the garbage
// collector deletes them with the last Agent.
func TierObjects(namespace, tierName string, t tiers.Tier, agents []*ossav1.Agent) []render.Child {
	live := slices.DeleteFunc(slices.Clone(agents), func(a *ossav1.Agent) bool { return a.DeletionTimestamp != nil })
	slices.SortFunc(live, func(a, b *ossav1.Agent) int { return strings.Compare(string(a.UID), string(b.UID)) })
	owners := make([]*metav1ac.OwnerReferenceApplyConfiguration, 0, len(live))
	for _, a := range live {
		owners = append(owners, metav1ac.OwnerReference().WithAPIVersion(ossav1.SchemeGroupVersion.String()).
			WithKind("Agent").WithName(a.Name).WithUID(a.UID))
	}
	l := TierObjectLabels()
	return []render.Child{render.TierQuota(namespace, l, tierName, t, owners...),
		render.TierLimitRange(namespace, l, tierName, t, owners...)}
}

// TierObjectLabels label the Agents' tier quota and limit range; they carry
// no user label, so the UserDeployment controller neither caches nor
// releases them.
func TierObjectLabels() map[string]string {
	return map[string]string{labelkeys.ManagedBy: labelkeys.ManagedByValue, labelkeys.PartOf: labelkeys.PartOfValue,
		labelkeys.Component: ComponentAgent}
}

// Caches of the namespaces (their max-tier label) and of the tier quotas
// and limit ranges the manager keeps (a user namespace's too), trimmed.
var (
	namespaceKind = manager.KubeKind{Object: &corev1.Namespace{},
		Resource: corev1.SchemeGroupVersion.WithResource("namespaces"), Transform: keepMaxTier}
	quotaKind = manager.KubeKind{Object: &corev1.ResourceQuota{},
		Resource: corev1.SchemeGroupVersion.WithResource("resourcequotas"), Select: selectTierObjects, Transform: trimTierObject}
	limitRangeKind = manager.KubeKind{Object: &corev1.LimitRange{},
		Resource: corev1.SchemeGroupVersion.WithResource("limitranges"), Select: selectTierObjects, Transform: trimTierObject}
)

func selectTierObjects(o *metav1.ListOptions) {
	o.LabelSelector = labels.SelectorFromSet(labels.Set{labelkeys.ManagedBy: labelkeys.ManagedByValue}).String()
	o.FieldSelector = "metadata.name=" + render.UserChildName
}

// keepMaxTier trims a namespace to its name and max-tier label.
func keepMaxTier(obj any) (any, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return obj, nil // a tombstone
	}
	out := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name, ResourceVersion: ns.ResourceVersion}}
	if tier, ok := ns.Labels[labelkeys.MaxTier]; ok {
		out.Labels = map[string]string{labelkeys.MaxTier: tier}
	}
	return out, nil
}

// trimTierObject drops the managed fields and a quota's status (its usage,
// which changes with every pod).
func trimTierObject(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	if q, ok := obj.(*corev1.ResourceQuota); ok {
		q.Status = corev1.ResourceQuotaStatus{}
	}
	return obj, nil
}

// maxTierNews reports whether a namespace's max-tier label changed.
func maxTierNews(old, obj client.Object) bool {
	return old != nil && obj != nil && old.GetLabels()[labelkeys.MaxTier] != obj.GetLabels()[labelkeys.MaxTier]
}

// tierObjectNews reports a tier object's creation, deletion or change
// (trimmed, so not its usage).
func tierObjectNews(old, obj client.Object) bool {
	if old == nil || obj == nil {
		return true
	}
	o, n := old.DeepCopyObject().(client.Object), obj.DeepCopyObject().(client.Object)
	o.SetResourceVersion("")
	n.SetResourceVersion("")
	return !equality.Semantic.DeepEqual(o, n)
}

// agentsOf enqueues every Agent of namespace (none when it is not watched).
func (r *Reconciler) agentsOf(namespace string) []reconcile.Request {
	f := r.informers.For(namespace)
	if f == nil {
		return nil
	}
	objs, err := f.Ossa().V1().Agents().Lister().Agents(namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(objs))
	for _, a := range objs {
		out = append(out, request(a.Namespace, a.Name))
	}
	return out
}

func (r *Reconciler) mapNamespace(obj client.Object) []reconcile.Request {
	return r.agentsOf(obj.GetName())
}
func (r *Reconciler) mapTierObject(obj client.Object) []reconcile.Request {
	return r.agentsOf(obj.GetNamespace())
}
