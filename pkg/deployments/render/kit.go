package render

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// The builders below are shared by every long-lived workload the
// deployments manager runs: a UserDeployment's services and an Agent.

// Workload names one workload's children and how its pods are selected.
type Workload struct {
	Namespace, Name string
	// Labels and Annotations go on every child.
	Labels, Annotations map[string]string
	// Selector selects the workload's pods.
	Selector map[string]string
	// Owner, if set, is the controller owner reference of every child (only
	// for children in the owner's namespace).
	Owner *metav1.OwnerReference
}

// OwnerRefs is the workload's owner reference, if it has one.
func (w Workload) OwnerRefs() []*metav1ac.OwnerReferenceApplyConfiguration {
	o := w.Owner
	if o == nil {
		return nil
	}
	return []*metav1ac.OwnerReferenceApplyConfiguration{metav1ac.OwnerReference().WithAPIVersion(o.APIVersion).
		WithKind(o.Kind).WithName(o.Name).WithUID(o.UID).WithController(true).WithBlockOwnerDeletion(true)}
}

// Deployment runs the workload's pods as spec says; the selector and the
// pod template's labels are the workload's.
func (w Workload) Deployment(spec *appsv1ac.DeploymentSpecApplyConfiguration) Child {
	return Child{GVK: GVKDeployment, Namespace: w.Namespace, Name: w.Name,
		Object: appsv1ac.Deployment(w.Name, w.Namespace).WithLabels(w.Labels).WithAnnotations(w.Annotations).
			WithOwnerReferences(w.OwnerRefs()...).WithSpec(spec)}
}

// Service exposes ports of the workload's pods inside the cluster (or as typ).
func (w Workload) Service(typ corev1.ServiceType, ports ...*corev1ac.ServicePortApplyConfiguration) Child {
	spec := corev1ac.ServiceSpec().WithType(typ).WithSelector(w.Selector).WithPorts(ports...)
	return Child{GVK: GVKService, Namespace: w.Namespace, Name: w.Name,
		Object: corev1ac.Service(w.Name, w.Namespace).WithLabels(w.Labels).WithAnnotations(w.Annotations).
			WithOwnerReferences(w.OwnerRefs()...).WithSpec(spec)}
}

// ConfigMap is the workload's ConfigMap name holding data.
func (w Workload) ConfigMap(name string, data map[string]string) Child {
	return Child{GVK: GVKConfigMap, Namespace: w.Namespace, Name: name,
		Object: corev1ac.ConfigMap(name, w.Namespace).WithLabels(w.Labels).WithAnnotations(w.Annotations).
			WithOwnerReferences(w.OwnerRefs()...).WithData(data)}
}

// RestrictedContainer runs image as container name under the restricted
// Pod Security Standard: non-root, no privilege escalation, no
// capabilities, the runtime's default seccomp profile.
func RestrictedContainer(name, image string) *corev1ac.ContainerApplyConfiguration {
	return corev1ac.Container().WithName(name).WithImage(image).
		WithSecurityContext(corev1ac.SecurityContext().
			WithAllowPrivilegeEscalation(false).
			WithRunAsNonRoot(true).
			WithCapabilities(corev1ac.Capabilities().WithDrop("ALL")).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault)))
}

// RestrictedPod is a pod of containers under the restricted Pod Security
// Standard that gets no ServiceAccount token and no service environment
// variables: a user's workload has no business with the API server.
func RestrictedPod(containers ...*corev1ac.ContainerApplyConfiguration) *corev1ac.PodSpecApplyConfiguration {
	return corev1ac.PodSpec().
		WithAutomountServiceAccountToken(false).
		WithEnableServiceLinks(false).
		WithSecurityContext(corev1ac.PodSecurityContext().WithRunAsNonRoot(true).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
		WithContainers(containers...)
}

// UtilizationMetric is an autoscaler metric aiming at percent of the
// requested amount of resource, averaged over the pods.
func UtilizationMetric(resource corev1.ResourceName, percent int32) *autoscalingv2ac.MetricSpecApplyConfiguration {
	return autoscalingv2ac.MetricSpec().WithType(autoscalingv2.ResourceMetricSourceType).
		WithResource(autoscalingv2ac.ResourceMetricSource().WithName(resource).
			WithTarget(autoscalingv2ac.MetricTarget().WithType(autoscalingv2.UtilizationMetricType).
				WithAverageUtilization(percent)))
}

// HPA scales target between min and max replicas on metrics.
func (w Workload) HPA(target *autoscalingv2ac.CrossVersionObjectReferenceApplyConfiguration, minReplicas, maxReplicas int32,
	metrics ...*autoscalingv2ac.MetricSpecApplyConfiguration) Child {
	spec := autoscalingv2ac.HorizontalPodAutoscalerSpec().WithScaleTargetRef(target).
		WithMinReplicas(minReplicas).WithMaxReplicas(maxReplicas).WithMetrics(metrics...)
	return Child{GVK: GVKHPA, Namespace: w.Namespace, Name: w.Name,
		Object: autoscalingv2ac.HorizontalPodAutoscaler(w.Name, w.Namespace).WithLabels(w.Labels).
			WithAnnotations(w.Annotations).WithOwnerReferences(w.OwnerRefs()...).WithSpec(spec)}
}

// ServiceMonitor has prometheus-operator scrape path on the named port of
// the workload's pods; an empty interval is the operator's default.
func (w Workload) ServiceMonitor(port, path, interval string) Child {
	ep := map[string]any{"port": port, "path": path}
	if interval != "" {
		ep["interval"] = interval
	}
	sel := map[string]any{}
	for k, v := range w.Selector {
		sel[k] = v
	}
	spec := map[string]any{
		"selector":          map[string]any{"matchLabels": sel},
		"namespaceSelector": map[string]any{"matchNames": []any{w.Namespace}},
		"endpoints":         []any{ep},
	}
	u := newUnstructured(GVKServiceMonitor, w.Namespace, w.Name, w.Labels, w.Annotations, spec)
	if o := w.Owner; o != nil {
		u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: o.UID,
			Controller: new(true), BlockOwnerDeletion: new(true)}})
	}
	return Child{GVK: GVKServiceMonitor, Namespace: w.Namespace, Name: w.Name, Object: u}
}
