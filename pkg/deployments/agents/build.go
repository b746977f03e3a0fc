package agents

import (
	"bytes"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// Names, labels and paths of an Agent's children.
const (
	// ComponentAgent is the app.kubernetes.io/component of every child.
	ComponentAgent = "agent"
	// CapabilitiesKey is the capabilities ConfigMap's key.
	CapabilitiesKey = "capabilities.json"
	// CapabilitiesPath is where the agent's container finds it.
	CapabilitiesPath = "/etc/ossa/capabilities.json"
	// DefaultPort is the agent's port when neither spec.port nor
	// runtime.health_check.port names one.
	DefaultPort int32 = 8080
	// GPUResource is the extended resource runtime.resources.gpu asks for.
	GPUResource corev1.ResourceName = "nvidia.com/gpu"

	containerName      = "agent"
	capabilitiesVolume = "capabilities"
	healthPortName     = "health"
	defaultHealthPath  = "/health"
	defaultMetricsPath = "/metrics"
)

// Kinds are the kinds of an Agent's children, in apply order.
var Kinds = []schema.GroupVersionKind{render.GVKNetworkPolicy, render.GVKConfigMap, render.GVKDeployment, render.GVKService,
	render.GVKHPA, render.GVKServiceMonitor}

// CapabilitiesConfigMapName names the Agent's capabilities ConfigMap.
func CapabilitiesConfigMapName(a *ossav1.Agent) string { return a.Name + "-capabilities" }

// SelectorLabels select the Agent's pods; they never change, as a
// Deployment's selector cannot.
func SelectorLabels(a *ossav1.Agent) map[string]string {
	return map[string]string{labelkeys.ManagedBy: labelkeys.ManagedByValue, labelkeys.Agent: a.Name}
}

// Selector is SelectorLabels as a label selector string, the Agent's
// status.selector for its scale subresource.
func Selector(a *ossav1.Agent) string { return labels.SelectorFromSet(SelectorLabels(a)).String() }

// Labels go on every child and pod of the Agent.
func Labels(a *ossav1.Agent) map[string]string {
	l := SelectorLabels(a)
	l[labelkeys.PartOf] = labelkeys.PartOfValue
	l[labelkeys.Component] = ComponentAgent
	l[labelkeys.Instance] = a.Name
	l[labelkeys.Name] = a.Spec.Agent.ID
	return l
}

// OwnerReference makes the Agent the controller of a child.
func OwnerReference(a *ossav1.Agent) *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: ossav1.SchemeGroupVersion.String(), Kind: "Agent", Name: a.Name, UID: a.UID,
		Controller: new(true), BlockOwnerDeletion: new(true)}
}

// Port is where the agent serves: spec.port, else health_check.port, else
// DefaultPort.
func Port(a *ossav1.Agent) int32 {
	switch hc := a.Spec.Agent.Runtime.HealthCheck; {
	case a.Spec.Port != nil:
		return *a.Spec.Port
	case hc != nil && hc.Port != nil:
		return *hc.Port
	}
	return DefaultPort
}

// PortName names the serving port after the integration protocol: grpc
// for gRPC, http otherwise (HTTP, MCP and WebSocket all start as HTTP).
func PortName(a *ossav1.Agent) string {
	if in := a.Spec.Agent.Integration; in != nil && in.Protocol == "grpc" {
		return "grpc"
	}
	return "http"
}

// Endpoint is the agent's in-cluster URL, its Service's DNS name.
func Endpoint(a *ossav1.Agent) string {
	return fmt.Sprintf("http://%s.%s.svc:%d", a.Name, a.Namespace, Port(a))
}

// UnsupportedRuntime says why the Agent's runtime type cannot run as a
// Deployment, "" when it can (docker, k8s).
func UnsupportedRuntime(a *ossav1.Agent) string {
	switch t := a.Spec.Agent.Runtime.Type; t {
	case ossav1.RuntimeDocker, ossav1.RuntimeK8s:
		return ""
	default:
		return fmt.Sprintf("spec.agent.runtime.type %q cannot run in the cluster: only %q and %q run as a Deployment",
			t, ossav1.RuntimeDocker, ossav1.RuntimeK8s)
	}
}

// Options are what an Agent's children depend on besides the Agent.
type Options struct {
	// ServiceMonitor is set when prometheus-operator's CRD is installed.
	ServiceMonitor bool
	// NetworkPolicy isolates the pods (Config.NetworkPolicies).
	NetworkPolicy bool
	// Tier is the namespace's tier (NamespaceTier).
	Tier tiers.Tier
	// Dependents name the namespace's Agents that depend on it (Dependents).
	Dependents []string
}

// Children are the Agent's desired children in apply order: the
// NetworkPolicy first, so no pod runs before it, with o.NetworkPolicy; the
// ServiceMonitor only with monitoring.metrics and o.ServiceMonitor.
func Children(a *ossav1.Agent, o Options) ([]render.Child, error) {
	caps, err := CapabilitiesJSON(a.Spec.Agent.Capabilities)
	if err != nil {
		return nil, err
	}
	var out []render.Child
	if o.NetworkPolicy {
		out = append(out, NetworkPolicy(a, o.Dependents))
	}
	out = append(out, CapabilitiesConfigMap(a, caps), Deployment(a, caps, o.Tier), Service(a))
	if c, ok := HPA(a); ok {
		out = append(out, c)
	}
	if c, ok := ServiceMonitor(a); ok && o.ServiceMonitor {
		out = append(out, c)
	}
	return out, nil
}

func workload(a *ossav1.Agent) render.Workload {
	return render.Workload{Namespace: a.Namespace, Name: a.Name, Labels: Labels(a), Selector: SelectorLabels(a),
		Owner: OwnerReference(a)}
}

// CapabilitiesJSON is the capabilities with their schemas as indented JSON
// with sorted keys: the same capabilities always give the same bytes.
func CapabilitiesJSON(caps []ossav1.Capability) (string, error) {
	raw, err := json.Marshal(caps)
	if err != nil {
		return "", fmt.Errorf("encode capabilities: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep numbers in schemas as written
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("decode capabilities: %w", err)
	}
	out, err := json.MarshalIndent(v, "", "  ") // maps marshal with sorted keys
	if err != nil {
		return "", fmt.Errorf("encode capabilities: %w", err)
	}
	return string(out) + "\n", nil
}

// CapabilitiesConfigMap holds capabilities (CapabilitiesJSON) for discovery
// and for the agent's container.
func CapabilitiesConfigMap(a *ossav1.Agent, capabilities string) render.Child {
	return workload(a).ConfigMap(CapabilitiesConfigMapName(a), map[string]string{CapabilitiesKey: capabilities})
}

// Deployment runs the agent's image with restricted pod security, as many
// copies as spec.replicas, its cpu limit set for tier t (cpuLimit).
func Deployment(a *ossav1.Agent, capabilities string, t tiers.Tier) render.Child {
	replicas := int32(1)
	if a.Spec.Replicas != nil {
		replicas = *a.Spec.Replicas
	}
	pod := render.RestrictedPod(container(a, t)).WithVolumes(corev1ac.Volume().WithName(capabilitiesVolume).
		WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(CapabilitiesConfigMapName(a))))
	spec := appsv1ac.DeploymentSpec().WithReplicas(replicas).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(a))).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(Labels(a)).
			// The file is mounted with subPath, which the kubelet never
			// updates: a change of the capabilities rolls the pods.
			WithAnnotations(map[string]string{render.AnnotationConfigHash: render.Hash(capabilities, 16)}).
			WithSpec(pod))
	return workload(a).Deployment(spec)
}

// Service exposes the agent's port inside the cluster.
func Service(a *ossav1.Agent) render.Child {
	name := PortName(a)
	return workload(a).Service(corev1.ServiceTypeClusterIP, corev1ac.ServicePort().WithName(name).WithPort(Port(a)).
		WithTargetPort(intstr.FromString(name)).WithProtocol(corev1.ProtocolTCP))
}

// HPA scales the Agent, through its scale subresource, on the CPU and
// memory targets of spec.autoscaling; none without autoscaling.
func HPA(a *ossav1.Agent) (render.Child, bool) {
	as := a.Spec.Autoscaling
	if as == nil {
		return render.Child{}, false
	}
	var metrics []*autoscalingv2ac.MetricSpecApplyConfiguration
	if as.TargetCPUUtilizationPercentage != nil {
		metrics = append(metrics, render.UtilizationMetric(corev1.ResourceCPU, *as.TargetCPUUtilizationPercentage))
	}
	if as.TargetMemoryUtilizationPercentage != nil {
		metrics = append(metrics, render.UtilizationMetric(corev1.ResourceMemory, *as.TargetMemoryUtilizationPercentage))
	}
	target := autoscalingv2ac.CrossVersionObjectReference().WithAPIVersion(ossav1.SchemeGroupVersion.String()).
		WithKind("Agent").WithName(a.Name)
	return workload(a).HPA(target, as.MinReplicas, as.MaxReplicas, metrics...), true
}

// ServiceMonitor has prometheus-operator scrape integration.endpoints.metrics
// (default /metrics) on the serving port, with monitoring.metrics.
func ServiceMonitor(a *ossav1.Agent) (render.Child, bool) {
	m := a.Spec.Agent.Monitoring
	if m == nil || m.Metrics == nil || !*m.Metrics {
		return render.Child{}, false
	}
	path := defaultMetricsPath
	if in := a.Spec.Agent.Integration; in != nil && in.Endpoints != nil && in.Endpoints.Metrics != "" {
		path = in.Endpoints.Metrics
	}
	return workload(a).ServiceMonitor(PortName(a), path, ""), true
}
