package testkit

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
)

// Agent fixtures, in the manner of the other wrappers here:
// MakeAgent("search", ns).Requires("db", "1.0.0", "").Obj().

// AgentWrapper builds an Agent.
type AgentWrapper struct{ ossav1.Agent }

// MakeAgent returns a valid Agent whose id is its name: version 1.0.0, role
// chat, runtime docker ghcr.io/acme/agent:1, one capability "answer" with
// object schemas, one replica.
func MakeAgent(name, namespace string) *AgentWrapper {
	return &AgentWrapper{ossav1.Agent{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: ossav1.AgentSpec{OSSAVersion: "1.0", Replicas: ptr.To[int32](1), Agent: ossav1.AgentDefinition{
			ID: name, Name: "Agent " + name, Version: "1.0.0", Role: "chat",
			Runtime:      ossav1.AgentRuntime{Type: ossav1.RuntimeDocker, Image: "ghcr.io/acme/agent:1"},
			Capabilities: []ossav1.Capability{Capability("answer", `{"type":"object"}`, `{"type":"object"}`)},
		}},
	}}
}

// Capability has the given input and output schemas (JSON).
func Capability(name, in, out string) ossav1.Capability {
	return ossav1.Capability{Name: name, Description: "does " + name,
		InputSchema: runtime.RawExtension{Raw: []byte(in)}, OutputSchema: runtime.RawExtension{Raw: []byte(out)}}
}

// Obj returns a copy of the built Agent.
func (w *AgentWrapper) Obj() *ossav1.Agent { return w.DeepCopy() }

// ID sets spec.agent.id.
func (w *AgentWrapper) ID(id string) *AgentWrapper { w.Spec.Agent.ID = id; return w }

// Version sets spec.agent.version.
func (w *AgentWrapper) Version(v string) *AgentWrapper { w.Spec.Agent.Version = v; return w }

// WithUID sets metadata.uid (unit tests).
func (w *AgentWrapper) WithUID(uid string) *AgentWrapper { w.UID = k8stypes.UID(uid); return w }

// Runtime sets spec.agent.runtime.type.
func (w *AgentWrapper) Runtime(t ossav1.RuntimeType) *AgentWrapper {
	w.Spec.Agent.Runtime.Type = t
	return w
}

// Command sets spec.agent.runtime.command.
func (w *AgentWrapper) Command(cmd ...string) *AgentWrapper {
	w.Spec.Agent.Runtime.Command = cmd
	return w
}

// Capabilities replaces spec.agent.capabilities.
func (w *AgentWrapper) Capabilities(caps ...ossav1.Capability) *AgentWrapper {
	w.Spec.Agent.Capabilities = caps
	return w
}

// Requires adds a required dependency on id within [min, max].
func (w *AgentWrapper) Requires(id, minVersion, maxVersion string) *AgentWrapper {
	d := w.dependencies()
	d.Required = append(d.Required, ossav1.RequiredDependency{AgentID: id, MinVersion: minVersion, MaxVersion: maxVersion})
	return w
}

// Uses adds an optional dependency on id.
func (w *AgentWrapper) Uses(id, fallback string) *AgentWrapper {
	d := w.dependencies()
	d.Optional = append(d.Optional, ossav1.OptionalDependency{AgentID: id, Fallback: fallback})
	return w
}

func (w *AgentWrapper) dependencies() *ossav1.Dependencies {
	if w.Spec.Agent.Dependencies == nil {
		w.Spec.Agent.Dependencies = &ossav1.Dependencies{}
	}
	return w.Spec.Agent.Dependencies
}

// HealthCheck sets spec.agent.runtime.health_check.
func (w *AgentWrapper) HealthCheck(hc ossav1.HealthCheck) *AgentWrapper {
	w.Spec.Agent.Runtime.HealthCheck = &hc
	return w
}

// Resources sets spec.agent.runtime.resources ("" leaves a quantity unset).
func (w *AgentWrapper) Resources(cpu, memory string, gpu bool) *AgentWrapper {
	r := &ossav1.RuntimeResources{}
	if cpu != "" {
		r.CPU = ptr.To(resource.MustParse(cpu))
	}
	if memory != "" {
		r.Memory = ptr.To(resource.MustParse(memory))
	}
	if gpu {
		r.GPU = ptr.To(true)
	}
	w.Spec.Agent.Runtime.Resources = r
	return w
}

// Autoscaling sets spec.autoscaling (0 leaves a target unset).
func (w *AgentWrapper) Autoscaling(minReplicas, maxReplicas, cpu, memory int32) *AgentWrapper {
	as := &ossav1.AgentAutoscaling{MinReplicas: minReplicas, MaxReplicas: maxReplicas}
	if cpu > 0 {
		as.TargetCPUUtilizationPercentage = ptr.To(cpu)
	}
	if memory > 0 {
		as.TargetMemoryUtilizationPercentage = ptr.To(memory)
	}
	w.Spec.Autoscaling = as
	return w
}

// Port sets spec.port.
func (w *AgentWrapper) Port(p int32) *AgentWrapper { w.Spec.Port = ptr.To(p); return w }

// Replicas sets spec.replicas.
func (w *AgentWrapper) Replicas(n int32) *AgentWrapper { w.Spec.Replicas = ptr.To(n); return w }

// Metrics turns monitoring.metrics on, scraped at path ("" for the default).
func (w *AgentWrapper) Metrics(path string) *AgentWrapper {
	w.Spec.Agent.Monitoring = &ossav1.Monitoring{Metrics: ptr.To(true)}
	if path != "" {
		w.integration().Endpoints = &ossav1.Endpoints{Metrics: path}
	}
	return w
}

// Protocol sets integration.protocol.
func (w *AgentWrapper) Protocol(p string) *AgentWrapper { w.integration().Protocol = p; return w }

func (w *AgentWrapper) integration() *ossav1.Integration {
	if w.Spec.Agent.Integration == nil {
		w.Spec.Agent.Integration = &ossav1.Integration{}
	}
	return w.Spec.Agent.Integration
}
