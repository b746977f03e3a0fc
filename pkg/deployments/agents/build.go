package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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
var Kinds = []schema.GroupVersionKind{render.GVKConfigMap, render.GVKDeployment, render.GVKService, render.GVKHPA,
	render.GVKServiceMonitor}

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

// Children are the Agent's desired children in apply order; the
// ServiceMonitor only with monitoring.metrics and serviceMonitor (its CRD
// is installed).
func Children(a *ossav1.Agent, serviceMonitor bool) ([]render.Child, error) {
	caps, err := CapabilitiesJSON(a.Spec.Agent.Capabilities)
	if err != nil {
		return nil, err
	}
	out := []render.Child{CapabilitiesConfigMap(a, caps), Deployment(a, caps), Service(a)}
	if c, ok := HPA(a); ok {
		out = append(out, c)
	}
	if c, ok := ServiceMonitor(a); ok && serviceMonitor {
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
// copies as spec.replicas.
func Deployment(a *ossav1.Agent, capabilities string) render.Child {
	replicas := int32(1)
	if a.Spec.Replicas != nil {
		replicas = *a.Spec.Replicas
	}
	pod := render.RestrictedPod(container(a)).WithVolumes(corev1ac.Volume().WithName(capabilitiesVolume).
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

func container(a *ossav1.Agent) *corev1ac.ContainerApplyConfiguration {
	rt := a.Spec.Agent.Runtime
	c := render.RestrictedContainer(containerName, rt.Image).WithEnv(env(a)...).
		WithVolumeMounts(corev1ac.VolumeMount().WithName(capabilitiesVolume).WithMountPath(CapabilitiesPath).
			WithSubPath(CapabilitiesKey).WithReadOnly(true))
	if len(rt.Command) > 0 {
		c.WithCommand(rt.Command...)
	}
	port := Port(a)
	c.WithPorts(corev1ac.ContainerPort().WithName(PortName(a)).WithContainerPort(port).WithProtocol(corev1.ProtocolTCP))
	if hc := rt.HealthCheck; hc != nil && hc.Port != nil && *hc.Port != port {
		c.WithPorts(corev1ac.ContainerPort().WithName(healthPortName).WithContainerPort(*hc.Port).WithProtocol(corev1.ProtocolTCP))
	}
	if r := resources(rt.Resources); r != nil {
		c.WithResources(r)
	}
	if p := Probe(a); p != nil {
		c.WithLivenessProbe(p).WithReadinessProbe(Probe(a))
	}
	return c
}

func env(a *ossav1.Agent) []*corev1ac.EnvVarApplyConfiguration {
	def := a.Spec.Agent
	names := make([]string, 0, len(def.Capabilities))
	for _, c := range def.Capabilities {
		names = append(names, c.Name)
	}
	out := make([]*corev1ac.EnvVarApplyConfiguration, 0, 7)
	for _, kv := range [][2]string{
		{"OSSA_AGENT_ID", def.ID}, {"OSSA_AGENT_NAME", def.Name}, {"OSSA_AGENT_VERSION", def.Version},
		{"OSSA_AGENT_ROLE", string(def.Role)}, {"OSSA_CAPABILITIES", strings.Join(names, ",")},
		{"OSSA_CAPABILITIES_FILE", CapabilitiesPath},
	} {
		out = append(out, corev1ac.EnvVar().WithName(kv[0]).WithValue(kv[1]))
	}
	return out
}

// resources requests runtime.resources' cpu and memory, limits memory to
// the request (memory cannot be taken back from a pod, so no pod uses more
// than it asked for) and asks for one GPU with gpu; nil when none is set.
func resources(r *ossav1.RuntimeResources) *corev1ac.ResourceRequirementsApplyConfiguration {
	if r == nil {
		return nil
	}
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	if r.CPU != nil {
		requests[corev1.ResourceCPU] = *r.CPU
	}
	if r.Memory != nil {
		requests[corev1.ResourceMemory] = *r.Memory
		limits[corev1.ResourceMemory] = *r.Memory
	}
	if r.GPU != nil && *r.GPU {
		limits[GPUResource] = resource.MustParse("1")
	}
	if len(requests) == 0 && len(limits) == 0 {
		return nil
	}
	out := corev1ac.ResourceRequirements()
	if len(requests) > 0 {
		out.WithRequests(requests)
	}
	if len(limits) > 0 {
		out.WithLimits(limits)
	}
	return out
}

// Probe is the liveness and readiness probe runtime.health_check
// describes, nil without one: an HTTP GET of its endpoint (default
// integration.endpoints.health, else /health), a TCP connect or a command,
// on its port, with its delays, period, timeout and failure threshold.
func Probe(a *ossav1.Agent) *corev1ac.ProbeApplyConfiguration {
	hc := a.Spec.Agent.Runtime.HealthCheck
	if hc == nil {
		return nil
	}
	port := Port(a)
	if hc.Port != nil {
		port = *hc.Port
	}
	p := corev1ac.Probe()
	switch hc.Type {
	case "http":
		p.WithHTTPGet(corev1ac.HTTPGetAction().WithPath(healthPath(a)).WithPort(intstr.FromInt32(port)))
	case "tcp":
		p.WithTCPSocket(corev1ac.TCPSocketAction().WithPort(intstr.FromInt32(port)))
	case "exec":
		p.WithExec(corev1ac.ExecAction().WithCommand(hc.Command...))
	default:
		return nil
	}
	if hc.InitialDelaySeconds != nil {
		p.WithInitialDelaySeconds(*hc.InitialDelaySeconds)
	}
	if hc.PeriodSeconds != nil {
		p.WithPeriodSeconds(*hc.PeriodSeconds)
	}
	if hc.TimeoutSeconds != nil {
		p.WithTimeoutSeconds(*hc.TimeoutSeconds)
	}
	if hc.FailureThreshold != nil {
		p.WithFailureThreshold(*hc.FailureThreshold)
	}
	return p
}

func healthPath(a *ossav1.Agent) string {
	if p := a.Spec.Agent.Runtime.HealthCheck.Endpoint; p != "" {
		return p
	}
	if in := a.Spec.Agent.Integration; in != nil && in.Endpoints != nil && in.Endpoints.Health != "" {
		return in.Endpoints.Health
	}
	return defaultHealthPath
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
