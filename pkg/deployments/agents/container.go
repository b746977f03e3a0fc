package agents

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
)

func container(a *ossav1.Agent, t tiers.Tier) *corev1ac.ContainerApplyConfiguration {
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
	if r := resources(rt.Resources, t); r != nil {
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
// than it asked for), cpu to the request only above tier t's default limit
// (cpuLimit), and asks for one GPU with gpu; nil when none is set. The
// namespace's LimitRange gives what is left unset.
func resources(r *ossav1.RuntimeResources, t tiers.Tier) *corev1ac.ResourceRequirementsApplyConfiguration {
	if r == nil {
		return nil
	}
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	if r.CPU != nil {
		requests[corev1.ResourceCPU] = *r.CPU
	}
	if cpu, ok := cpuLimit(r.CPU, t); ok {
		limits[corev1.ResourceCPU] = cpu
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
