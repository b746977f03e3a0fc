package render

import (
	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"opsnorth.io/scheduler/pkg/deployments/tiers"
)

// PodSecurityEnforce is the Pod Security admission label of user namespaces.
const PodSecurityEnforce = "pod-security.kubernetes.io/enforce"

// Namespace is the user namespace; created marks it as made by the manager.
func Namespace(name, userID string, created bool) Child {
	l := UserLabels(userID)
	l[PodSecurityEnforce] = "restricted"
	l["pod-security.kubernetes.io/enforce-version"] = "latest"
	ac := corev1ac.Namespace(name).WithLabels(l)
	if created {
		ac.WithAnnotations(map[string]string{AnnotationCreatedNamespace: "opsnorth-scheduler-deployments"})
	}
	return Child{GVK: GVKNamespace, Name: name, Object: ac}
}

// UserChildName names the per-user quota and limit range.
const UserChildName = "opsnorth-tier"

// Quota is the tier's ResourceQuota in the user namespace.
func Quota(namespace, userID, tierName string, t tiers.Tier) Child {
	l := UserLabels(userID)
	l[tierLabel] = tierName
	ac := corev1ac.ResourceQuota(UserChildName, namespace).WithLabels(l).
		WithSpec(corev1ac.ResourceQuotaSpec().WithHard(t.Quota))
	return Child{GVK: GVKResourceQuota, Namespace: namespace, Name: UserChildName, Object: ac}
}

const tierLabel = "scheduler.opsnorth.io/tier"

// LimitRange gives containers the tier's default requests and limits and caps them.
func LimitRange(namespace, userID, tierName string, t tiers.Tier) Child {
	l := UserLabels(userID)
	l[tierLabel] = tierName
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
	ac := corev1ac.LimitRange(UserChildName, namespace).WithLabels(l).
		WithSpec(corev1ac.LimitRangeSpec().WithLimits(item))
	return Child{GVK: GVKLimitRange, Namespace: namespace, Name: UserChildName, Object: ac}
}
