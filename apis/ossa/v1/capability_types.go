package v1

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// Capability is one thing an agent can be asked to do (OSSA 1.0's
// capabilities[]). Its input and output schemas are each a JSON Schema
// object or the URI of one; a CRD schema cannot say "object or string", so
// they are kept as given and the manager checks them, naming the capability
// in a condition.
type Capability struct {
	// Name identifies the capability within the agent.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][-A-Za-z0-9_.]*$`
	Name string `json:"name"`
	// Description says what it does.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Description string `json:"description"`
	// InputSchema is the JSON Schema of its input (an object), or its URI (a string).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	InputSchema runtime.RawExtension `json:"input_schema"`
	// OutputSchema is the JSON Schema of its output (an object), or its URI (a string).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	OutputSchema runtime.RawExtension `json:"output_schema"`
	// Examples show inputs and the outputs they give.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Examples []CapabilityExample `json:"examples,omitempty"`
	// TimeoutSeconds is how long one call may take.
	// +optional
	// +kubebuilder:default=300
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	TimeoutSeconds *int32 `json:"timeout_seconds,omitempty"`
	// RetryPolicy is how a failed call is retried.
	// +optional
	RetryPolicy *RetryPolicy `json:"retry_policy,omitempty"`
}

// CapabilityExample is one example call of a capability.
type CapabilityExample struct {
	// Name names the example.
	// +optional
	// +kubebuilder:validation:MaxLength=200
	Name string `json:"name,omitempty"`
	// Input is the example's input.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Input *runtime.RawExtension `json:"input,omitempty"`
	// Output is what that input gives.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Output *runtime.RawExtension `json:"output,omitempty"`
}

// RetryPolicy is OSSA 1.0's capability retry_policy.
type RetryPolicy struct {
	// MaxAttempts is how many times a call is tried in all.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxAttempts *int32 `json:"max_attempts,omitempty"`
	// Backoff is how the wait between attempts grows.
	// +optional
	// +kubebuilder:validation:Enum=linear;exponential
	Backoff string `json:"backoff,omitempty"`
}
