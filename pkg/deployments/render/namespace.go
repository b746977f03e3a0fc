package render

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"opsnorth.io/scheduler/pkg/deployments/tiers"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// PodSecurityEnforce is the Pod Security admission label of user namespaces.
const PodSecurityEnforce = "pod-security.kubernetes.io/enforce"

// AnnotationRestore on a user namespace the manager did not create records
// the values its labels had before the manager changed them (RestoreRecord).
const AnnotationRestore = labelkeys.Prefix + "restore-labels"

// NamespaceLabels are the labels the manager sets on a user namespace.
func NamespaceLabels(userID string) map[string]string {
	l := UserLabels(userID)
	l[PodSecurityEnforce] = "restricted"
	l["pod-security.kubernetes.io/enforce-version"] = "latest"
	return l
}

// Namespace is the user namespace. created marks it as made by the manager;
// restore, on a namespace it did not create, is its RestoreRecord.
func Namespace(name, userID string, created bool, restore string) Child {
	ac := corev1ac.Namespace(name).WithLabels(NamespaceLabels(userID))
	switch {
	case created:
		ac.WithAnnotations(map[string]string{AnnotationCreatedNamespace: "opsnorth-scheduler-deployments"})
	case restore != "":
		ac.WithAnnotations(map[string]string{AnnotationRestore: restore})
	}
	return Child{GVK: GVKNamespace, Name: name, Object: ac}
}

// Adoption decides whether the manager may provision into an existing
// namespace, from its labels and annotations: one it created for the same
// user, or one the platform bound to that user. For a bound namespace it
// returns the restore record: the one already there, or a new one of the
// labels as they are now. Any other namespace is refused, never adopted.
func Adoption(name, userID string, labels, annotations map[string]string) (created bool, restore string, err error) {
	if annotations[AnnotationCreatedNamespace] != "" {
		if owner := labels[labelkeys.User]; owner != "" && owner != userID {
			return false, "", fmt.Errorf("namespace %s was created by the manager for user %q, not %q", name, owner, userID)
		}
		return true, "", nil
	}
	switch tenant := labels[labelkeys.Tenant]; tenant {
	case userID:
		if r := annotations[AnnotationRestore]; r != "" {
			return false, r, nil
		}
		r, err := RestoreRecord(labels, userID)
		return false, r, err
	case "":
		return false, "", fmt.Errorf("namespace %s exists and was not created by the manager; it is used only when bound to user %q (label %s=%s) or once it is deleted",
			name, userID, labelkeys.Tenant, userID)
	default:
		return false, "", fmt.Errorf("namespace %s is bound to user %q (label %s), not %q", name, tenant, labelkeys.Tenant, userID)
	}
}

// RestoreRecord is the JSON of the values the namespace's labels had before
// the manager set NamespaceLabels: a value, or null where it was absent.
func RestoreRecord(labels map[string]string, userID string) (string, error) {
	rec := map[string]*string{}
	for k := range NamespaceLabels(userID) {
		if v, ok := labels[k]; ok {
			rec[k] = &v
		} else {
			rec[k] = nil
		}
	}
	data, err := json.Marshal(rec) // sorted keys: the same record every time.
	if err != nil {
		return "", fmt.Errorf("encode restore record: %w", err)
	}
	return string(data), nil
}

// RestorePatch is the JSON merge patch that gives a namespace back the
// labels of its restore record and drops the manager's annotations.
func RestorePatch(record string) ([]byte, error) {
	var rec map[string]*string
	if err := json.Unmarshal([]byte(record), &rec); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", AnnotationRestore, err)
	}
	patch := map[string]any{"metadata": map[string]any{
		"labels":      rec,
		"annotations": map[string]any{AnnotationRestore: nil, AnnotationAppliedHash: nil},
	}}
	return json.Marshal(patch)
}

// InventoryName names the quota that counts, in a namespace the manager
// created, the objects of kinds it may not read (InventoryCounts).
const InventoryName = "opsnorth-inventory"

// InventoryCounts are the object counts the inventory quota keeps, with the
// kind each counts and how many of them the cluster itself leaves in every
// namespace (the default ServiceAccount). The manager reads no Secret: the
// API server's quota admission counts them. The other counts serve where
// the platform withholds list rights on their kinds.
var InventoryCounts = map[corev1.ResourceName]InventoryCount{
	"count/secrets":                                {Kind: "Secret"},
	"count/serviceaccounts":                        {Kind: "ServiceAccount", Baseline: 1},
	"count/statefulsets.apps":                      {Group: "apps", Kind: "StatefulSet"},
	"count/daemonsets.apps":                        {Group: "apps", Kind: "DaemonSet"},
	"count/jobs.batch":                             {Group: "batch", Kind: "Job"},
	"count/cronjobs.batch":                         {Group: "batch", Kind: "CronJob"},
	"count/roles.rbac.authorization.k8s.io":        {Group: "rbac.authorization.k8s.io", Kind: "Role"},
	"count/rolebindings.rbac.authorization.k8s.io": {Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"},
}

// InventoryCount is one kind the inventory quota counts.
type InventoryCount struct {
	Group, Kind string
	// Baseline is how many the cluster creates by itself.
	Baseline int64
}

// InventoryCountOf is the inventory quota's count of a kind, if it keeps one.
func InventoryCountOf(gk schema.GroupKind) (corev1.ResourceName, InventoryCount, bool) {
	for name, c := range InventoryCounts {
		if c.Group == gk.Group && c.Kind == gk.Kind {
			return name, c, true
		}
	}
	return "", InventoryCount{}, false
}

// inventoryCeiling is the inventory quota's hard count of every kind: it
// counts, it does not limit.
var inventoryCeiling = resource.MustParse("1000000")

// Inventory is the counting quota of a namespace the manager created.
func Inventory(namespace, userID string) Child {
	hard := corev1.ResourceList{}
	for _, name := range slices.Sorted(maps.Keys(InventoryCounts)) {
		hard[name] = inventoryCeiling
	}
	ac := corev1ac.ResourceQuota(InventoryName, namespace).WithLabels(UserLabels(userID)).
		WithSpec(corev1ac.ResourceQuotaSpec().WithHard(hard))
	return Child{GVK: GVKResourceQuota, Namespace: namespace, Name: InventoryName, Object: ac}
}

// AffinityQuotaName names the quota that refuses, in a user namespace,
// every pod with a pod (anti-)affinity term over other namespaces.
const AffinityQuotaName = "opsnorth-cross-namespace-affinity"

// AffinityQuota is a second wall in the user namespace: no pod there may
// keep other tenants' pods off nodes, or probe for their labels, with a
// cross-namespace pod (anti-)affinity term (quota scope
// CrossNamespacePodAffinity, hard pods 0).
func AffinityQuota(namespace, userID string) Child {
	ac := corev1ac.ResourceQuota(AffinityQuotaName, namespace).WithLabels(UserLabels(userID)).
		WithSpec(corev1ac.ResourceQuotaSpec().WithHard(corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}).
			WithScopeSelector(corev1ac.ScopeSelector().WithMatchExpressions(corev1ac.ScopedResourceSelectorRequirement().
				WithScopeName(corev1.ResourceQuotaScopeCrossNamespacePodAffinity).WithOperator(corev1.ScopeSelectorOpExists))))
	return Child{GVK: GVKResourceQuota, Namespace: namespace, Name: AffinityQuotaName, Object: ac}
}

// UserChildName names the per-user quota and limit range.
const UserChildName = "opsnorth-tier"

// Quota is the tier's ResourceQuota in the user namespace.
func Quota(namespace, userID, tierName string, t tiers.Tier) Child {
	return TierQuota(namespace, UserLabels(userID), tierName, t)
}

// TierLabel names the tier of a tier quota or limit range.
const TierLabel = labelkeys.Prefix + "tier"

// TierQuota is the tier's ResourceQuota UserChildName in namespace, labelled
// l and TierLabel, with owners (the Agent controller's, none for a user's).
func TierQuota(namespace string, l map[string]string, tierName string, t tiers.Tier,
	owners ...*metav1ac.OwnerReferenceApplyConfiguration) Child {
	ac := corev1ac.ResourceQuota(UserChildName, namespace).WithLabels(tierLabels(l, tierName)).
		WithOwnerReferences(owners...).WithSpec(corev1ac.ResourceQuotaSpec().WithHard(t.Quota))
	return Child{GVK: GVKResourceQuota, Namespace: namespace, Name: UserChildName, Object: ac}
}

func tierLabels(l map[string]string, tierName string) map[string]string {
	out := maps.Clone(l)
	out[TierLabel] = tierName
	return out
}

// LimitRange gives containers the tier's default requests and limits and caps them.
func LimitRange(namespace, userID, tierName string, t tiers.Tier) Child {
	return TierLimitRange(namespace, UserLabels(userID), tierName, t)
}

// TierLimitRange is LimitRange's UserChildName in namespace, labelled as TierQuota.
func TierLimitRange(namespace string, l map[string]string, tierName string, t tiers.Tier,
	owners ...*metav1ac.OwnerReferenceApplyConfiguration) Child {
	item := corev1ac.LimitRangeItem().WithType(corev1.LimitTypeContainer)
	if len(t.DefaultRequest) > 0 {
		item.WithDefaultRequest(t.DefaultRequest)
	}
	if len(t.DefaultLimit) > 0 {
		item.WithDefault(t.DefaultLimit)
	}
	if len(t.Max) > 0 {
		item.WithMax(t.Max)
	}
	ac := corev1ac.LimitRange(UserChildName, namespace).WithLabels(tierLabels(l, tierName)).
		WithOwnerReferences(owners...).WithSpec(corev1ac.LimitRangeSpec().WithLimits(item))
	return Child{GVK: GVKLimitRange, Namespace: namespace, Name: UserChildName, Object: ac}
}
