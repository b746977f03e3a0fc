package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// SemVerPattern is a semantic version 2.0.0, as OSSA requires of
// agent.version and the dependency bounds.
const SemVerPattern = `^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`

// AgentDefinition is OSSA 1.0's agent object.
// +kubebuilder:validation:XValidation:rule="!has(self.dependencies) || !has(self.dependencies.required) || self.dependencies.required.all(d, d.agent_id != self.id)",message="an agent cannot depend on itself",fieldPath=".dependencies.required"
type AgentDefinition struct {
	// ID identifies the agent among the agents it works with: a DNS label.
	// Dependencies name it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	ID string `json:"id"`
	// Name is the agent's display name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	Name string `json:"name"`
	// Version is the agent's semantic version (2.0.0), e.g. 1.4.0 or 2.0.0-rc.1.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`
	Version string `json:"version"`
	// Description says what the agent does.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Description string `json:"description,omitempty"`
	// Role is the agent's kind of work.
	Role AgentRole `json:"role"`
	// Tags label the agent for discovery.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=atomic
	Tags []string `json:"tags,omitempty"`
	// Runtime is what runs the agent and with what.
	Runtime AgentRuntime `json:"runtime"`
	// Capabilities are what the agent can be asked to do; at least one.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Capabilities []Capability `json:"capabilities"`
	// Policies are the compliance and data rules the agent follows.
	// +optional
	Policies *Policies `json:"policies,omitempty"`
	// Integration is how other agents and clients reach it.
	// +optional
	Integration *Integration `json:"integration,omitempty"`
	// Monitoring says what telemetry the agent emits.
	// +optional
	Monitoring *Monitoring `json:"monitoring,omitempty"`
	// Dependencies are the agents it needs (required) or can use (optional).
	// +optional
	Dependencies *Dependencies `json:"dependencies,omitempty"`
	// Metadata is about the agent's authorship and home.
	// +optional
	Metadata *AgentMetadata `json:"metadata,omitempty"`
}

// AgentRole is OSSA 1.0's role of an agent.
// +kubebuilder:validation:Enum=compliance;chat;orchestration;audit;workflow;monitoring;data_processing;integration;development;custom
type AgentRole string

// RuntimeType is where an agent runs. Only docker and k8s run as a
// Deployment; local, serverless and edge agents are reported, not run.
// +kubebuilder:validation:Enum=docker;k8s;local;serverless;edge
type RuntimeType string

// Runtime types.
const (
	RuntimeDocker     RuntimeType = "docker"
	RuntimeK8s        RuntimeType = "k8s"
	RuntimeLocal      RuntimeType = "local"
	RuntimeServerless RuntimeType = "serverless"
	RuntimeEdge       RuntimeType = "edge"
)

// AgentRuntime is OSSA 1.0's runtime object.
// +kubebuilder:validation:XValidation:rule="!(self.type in ['docker', 'k8s']) || has(self.image)",message="image is required for runtime type docker or k8s",fieldPath=".image"
type AgentRuntime struct {
	// Type is where the agent runs.
	Type RuntimeType `json:"type"`
	// Image is the agent's container image.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Image string `json:"image,omitempty"`
	// Command replaces the image's entrypoint.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=4096
	// +listType=atomic
	Command []string `json:"command,omitempty"`
	// Requirements are the language runtimes and packages the agent needs,
	// for tools that build its image; the operator does not read them.
	// +optional
	Requirements *RuntimeRequirements `json:"requirements,omitempty"`
	// Resources are what each copy of the agent is given.
	// +optional
	Resources *RuntimeResources `json:"resources,omitempty"`
	// HealthCheck is how the agent's liveness and readiness are probed.
	// +optional
	HealthCheck *HealthCheck `json:"health_check,omitempty"`
}

// RuntimeRequirements are OSSA 1.0's runtime.requirements.
type RuntimeRequirements struct {
	// Python is the Python version the agent needs, e.g. ">=3.11".
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Python string `json:"python,omitempty"`
	// Node is the Node.js version the agent needs.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Node string `json:"node,omitempty"`
	// Packages are the packages the agent needs.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=atomic
	Packages []string `json:"packages,omitempty"`
}

// RuntimeResources are OSSA 1.0's runtime.resources: the request (and limit)
// of each copy.
type RuntimeResources struct {
	// CPU in cores, e.g. 500m.
	// +optional
	CPU *resource.Quantity `json:"cpu,omitempty"`
	// Memory in bytes, e.g. 512Mi.
	// +optional
	Memory *resource.Quantity `json:"memory,omitempty"`
	// GPU asks for one GPU (nvidia.com/gpu) per copy.
	// +optional
	GPU *bool `json:"gpu,omitempty"`
}

// HealthCheck is OSSA 1.0's runtime.health_check.
// +kubebuilder:validation:XValidation:rule="self.type != 'exec' || has(self.command)",message="command is required for an exec health check",fieldPath=".command"
// +kubebuilder:validation:XValidation:rule="self.type == 'exec' || has(self.port)",message="port is required for an http or tcp health check",fieldPath=".port"
type HealthCheck struct {
	// Type is how the agent is probed.
	// +kubebuilder:validation:Enum=http;tcp;exec
	Type string `json:"type"`
	// Endpoint is the HTTP path of an http check, e.g. /health.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	Endpoint string `json:"endpoint,omitempty"`
	// Port is the port of an http or tcp check.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`
	// Command is the command of an exec check.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=4096
	// +listType=atomic
	Command []string `json:"command,omitempty"`
	// InitialDelaySeconds is how long after start the first probe runs.
	// +optional
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	InitialDelaySeconds *int32 `json:"initial_delay_seconds,omitempty"`
	// PeriodSeconds is how often it runs.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	PeriodSeconds *int32 `json:"period_seconds,omitempty"`
	// TimeoutSeconds is how long one probe may take.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	TimeoutSeconds *int32 `json:"timeout_seconds,omitempty"`
	// FailureThreshold is how many failed probes in a row make the agent
	// unhealthy.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	FailureThreshold *int32 `json:"failure_threshold,omitempty"`
}
