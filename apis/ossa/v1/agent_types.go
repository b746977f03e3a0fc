package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Agent runs an OSSA 1.0 agent as a long-lived workload: a Deployment of its
// runtime image, a Service on its port and a ConfigMap describing its
// capabilities, once the agents it depends on are ready.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:scope=Namespaced,shortName=agt;onagt,categories=opsnorth;ossa
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS label of at most 63 characters that starts with a letter: it names the agent's Service"
// +kubebuilder:printcolumn:name="Agent",type=string,JSONPath=`.spec.agent.id`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.agent.version`
// +kubebuilder:printcolumn:name="Role",type=string,JSONPath=`.spec.agent.role`
// +kubebuilder:printcolumn:name="Runtime",type=string,JSONPath=`.spec.agent.runtime.type`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Agent struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the agent's OSSA description and how many of it to run.
	Spec AgentSpec `json:"spec"`
	// Status is what runs.
	// +optional
	Status AgentStatus `json:"status,omitempty"`
}

// AgentSpec is an OSSA 1.0 document (ossaVersion and agent) and the
// workload fields OSSA has no place for.
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || !has(self.autoscaling.targetCPUUtilizationPercentage) || (has(self.agent.runtime.resources) && has(self.agent.runtime.resources.cpu))",message="autoscaling on CPU needs agent.runtime.resources.cpu: utilization is a share of the requested CPU",fieldPath=".autoscaling.targetCPUUtilizationPercentage"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || !has(self.autoscaling.targetMemoryUtilizationPercentage) || (has(self.agent.runtime.resources) && has(self.agent.runtime.resources.memory))",message="autoscaling on memory needs agent.runtime.resources.memory: utilization is a share of the requested memory",fieldPath=".autoscaling.targetMemoryUtilizationPercentage"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || self.agent.runtime.type in ['docker', 'k8s']",message="autoscaling needs a runtime type that runs in the cluster (docker or k8s)",fieldPath=".autoscaling"
type AgentSpec struct {
	// OSSAVersion is the OSSA schema version the agent follows; only "1.0".
	// +kubebuilder:validation:Enum="1.0"
	OSSAVersion string `json:"ossaVersion"`
	// Agent is the agent as the OSSA 1.0 schema describes it.
	Agent AgentDefinition `json:"agent"`
	// Replicas is how many copies of the agent run (not part of OSSA).
	// kubectl scale changes it; with autoscaling, the autoscaler does,
	// within its bounds, through the same scale subresource.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Replicas *int32 `json:"replicas,omitempty"`
	// Autoscaling scales the agent on CPU and memory use (not part of OSSA).
	// +optional
	Autoscaling *AgentAutoscaling `json:"autoscaling,omitempty"`
	// Port is where the agent serves its protocol (not part of OSSA, whose
	// only port is runtime.health_check.port); default that port, else 8080.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`
}

// AgentAutoscaling bounds a HorizontalPodAutoscaler of the agent.
// +kubebuilder:validation:XValidation:rule="self.minReplicas <= self.maxReplicas",message="minReplicas must not exceed maxReplicas"
// +kubebuilder:validation:XValidation:rule="has(self.targetCPUUtilizationPercentage) || has(self.targetMemoryUtilizationPercentage)",message="set targetCPUUtilizationPercentage, targetMemoryUtilizationPercentage or both"
type AgentAutoscaling struct {
	// MinReplicas is the fewest copies the autoscaler keeps.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MinReplicas int32 `json:"minReplicas"`
	// MaxReplicas is the most copies the autoscaler runs.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxReplicas int32 `json:"maxReplicas"`
	// TargetCPUUtilizationPercentage is the average CPU use, as a percentage
	// of the requested CPU, the autoscaler aims for.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	TargetCPUUtilizationPercentage *int32 `json:"targetCPUUtilizationPercentage,omitempty"`
	// TargetMemoryUtilizationPercentage is the average memory use, as a
	// percentage of the requested memory, the autoscaler aims for.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	TargetMemoryUtilizationPercentage *int32 `json:"targetMemoryUtilizationPercentage,omitempty"`
}

// AgentPhase summarizes an Agent's state.
// +kubebuilder:validation:Enum=Pending;Waiting;Progressing;Ready;Stalled
type AgentPhase string

// Agent phases.
const (
	// AgentPending: not looked at yet.
	AgentPending AgentPhase = "Pending"
	// AgentWaiting: a required dependency is missing, not ready or outside
	// its version range.
	AgentWaiting AgentPhase = "Waiting"
	// AgentProgressing: its workload is rolling out.
	AgentProgressing AgentPhase = "Progressing"
	// AgentReady: every replica serves.
	AgentReady AgentPhase = "Ready"
	// AgentStalled: it cannot run as asked until its spec changes.
	AgentStalled AgentPhase = "Stalled"
)

// Condition types of an Agent, beside Ready, Reconciling and Stalled.
const (
	// ConditionDependenciesReady is True when every required dependency is
	// Ready at a version within its range.
	ConditionDependenciesReady = "DependenciesReady"
)

// AgentStatus is what runs.
type AgentStatus struct {
	// Phase summarizes the conditions.
	// +optional
	Phase AgentPhase `json:"phase,omitempty"`
	// Replicas is how many pods of the agent exist.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// ReadyReplicas is how many of them are ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// Selector is the label selector of the agent's pods (for kubectl scale
	// and the autoscaler).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Selector string `json:"selector,omitempty"`
	// Endpoint is the agent's in-cluster URL.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Endpoint string `json:"endpoint,omitempty"`
	// CapabilityCount is how many capabilities the agent declares.
	// +optional
	CapabilityCount int32 `json:"capabilityCount,omitempty"`
	// Dependencies are the agents this one depends on, as resolved.
	// +optional
	// +listType=map
	// +listMapKey=agentId
	// +kubebuilder:validation:MaxItems=64
	Dependencies []ResolvedDependency `json:"dependencies,omitempty"`
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Ready, Reconciling, Stalled and DependenciesReady.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ResolvedDependency is one dependency and the agent that meets it.
type ResolvedDependency struct {
	// AgentID is the id the dependency names.
	// +kubebuilder:validation:MaxLength=63
	AgentID string `json:"agentId"`
	// Agent is the name of the Agent in the namespace with that id, if any.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Agent string `json:"agent,omitempty"`
	// Version is that agent's version.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version,omitempty"`
	// Optional is true for an optional dependency (it only annotates status).
	// +optional
	Optional bool `json:"optional,omitempty"`
	// Ready is true when that agent is Ready at a version within the range.
	Ready bool `json:"ready"`
	// Message says why it is not ready, or the fallback an optional one uses.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// AgentList is a list of Agents.
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type AgentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Agents.
	Items []Agent `json:"items"`
}
