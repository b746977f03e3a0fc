package v1

// Policies is OSSA 1.0's policies object.
// +kubebuilder:validation:XValidation:rule="!has(self.compliance) || size(self.compliance) == 0 || !has(self.encryption) || self.encryption",message="encryption must be true when compliance frameworks are set",fieldPath=".encryption"
type Policies struct {
	// Compliance are the frameworks the agent complies with.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	Compliance []ComplianceFramework `json:"compliance,omitempty"`
	// DataResidency are the regions its data may stay in.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=atomic
	DataResidency []string `json:"data_residency,omitempty"`
	// Encryption says its data is encrypted in transit and at rest.
	// +optional
	// +kubebuilder:default=true
	Encryption *bool `json:"encryption,omitempty"`
	// Audit says its actions are logged for audit.
	// +optional
	// +kubebuilder:default=false
	Audit *bool `json:"audit,omitempty"`
	// PIIHandling is what it does with personal data.
	// +optional
	// +kubebuilder:validation:Enum=none;anonymize;encrypt;prohibit
	PIIHandling string `json:"pii_handling,omitempty"`
}

// ComplianceFramework is one framework OSSA 1.0 names.
// +kubebuilder:validation:Enum=fedramp-low;fedramp-moderate;fedramp-high;iso27001;soc2-type1;soc2-type2;hipaa;gdpr;pci-dss;nist-800-53;iso42001;eu-ai-act
type ComplianceFramework string

// Integration is OSSA 1.0's integration object.
type Integration struct {
	// Protocol is how clients talk to the agent.
	// +optional
	// +kubebuilder:default=http
	// +kubebuilder:validation:Enum=http;grpc;mcp;websocket
	Protocol string `json:"protocol,omitempty"`
	// Endpoints are the agent's URLs and paths.
	// +optional
	Endpoints *Endpoints `json:"endpoints,omitempty"`
	// Auth is how clients authenticate. Config must not hold secrets: name
	// a Secret instead.
	// +optional
	Auth *Auth `json:"auth,omitempty"`
	// RateLimits bound the calls the agent accepts.
	// +optional
	RateLimits *RateLimits `json:"rate_limits,omitempty"`
}

// Endpoints is OSSA 1.0's integration.endpoints.
type Endpoints struct {
	// BaseURL is where the agent is reached outside the cluster, if anywhere.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	BaseURL string `json:"base_url,omitempty"`
	// Health is the path of its health endpoint.
	// +optional
	// +kubebuilder:default=/health
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	Health string `json:"health,omitempty"`
	// Metrics is the path of its Prometheus metrics.
	// +optional
	// +kubebuilder:default=/metrics
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	Metrics string `json:"metrics,omitempty"`
	// OpenAPI is the path or URL of its OpenAPI document.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	OpenAPI string `json:"openapi,omitempty"`
}

// Auth is OSSA 1.0's integration.auth.
type Auth struct {
	// Type is the authentication scheme.
	// +kubebuilder:validation:Enum=none;api_key;jwt;oauth2;mtls
	Type string `json:"type"`
	// Config are the scheme's settings (issuer, audience, header name...).
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	Config map[string]string `json:"config,omitempty"`
}

// RateLimits is OSSA 1.0's integration.rate_limits.
type RateLimits struct {
	// RequestsPerSecond is the sustained rate per second.
	// +optional
	// +kubebuilder:validation:Minimum=1
	RequestsPerSecond *int32 `json:"requests_per_second,omitempty"`
	// RequestsPerMinute is the sustained rate per minute.
	// +optional
	// +kubebuilder:validation:Minimum=1
	RequestsPerMinute *int32 `json:"requests_per_minute,omitempty"`
	// Burst is how many calls may come at once.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Burst *int32 `json:"burst,omitempty"`
}

// Monitoring is OSSA 1.0's monitoring object.
type Monitoring struct {
	// Traces says the agent emits traces.
	// +optional
	Traces *bool `json:"traces,omitempty"`
	// Metrics says it serves Prometheus metrics (a ServiceMonitor scrapes
	// them where prometheus-operator is installed).
	// +optional
	Metrics *bool `json:"metrics,omitempty"`
	// Logs says it emits structured logs.
	// +optional
	Logs *bool `json:"logs,omitempty"`
	// HealthCheck is the URI of its health endpoint.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	HealthCheck string `json:"health_check,omitempty"`
}

// Dependencies is OSSA 1.0's dependencies object.
type Dependencies struct {
	// Required are the agents that must be Ready, at a version within range,
	// before this one runs.
	// +optional
	// +listType=map
	// +listMapKey=agent_id
	// +kubebuilder:validation:MaxItems=32
	Required []RequiredDependency `json:"required,omitempty"`
	// Optional are agents it uses when present.
	// +optional
	// +listType=map
	// +listMapKey=agent_id
	// +kubebuilder:validation:MaxItems=32
	Optional []OptionalDependency `json:"optional,omitempty"`
}

// RequiredDependency is one agent this one needs.
type RequiredDependency struct {
	// AgentID is the id of the agent, in this namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	AgentID string `json:"agent_id"`
	// MinVersion is the lowest version that will do (inclusive).
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`
	MinVersion string `json:"min_version"`
	// MaxVersion is the highest version that will do (inclusive), if any.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`
	MaxVersion string `json:"max_version,omitempty"`
}

// OptionalDependency is one agent this one can use.
type OptionalDependency struct {
	// AgentID is the id of the agent, in this namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	AgentID string `json:"agent_id"`
	// Fallback is what the agent does without it.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Fallback string `json:"fallback,omitempty"`
}

// AgentMetadata is OSSA 1.0's metadata object.
type AgentMetadata struct {
	// Author wrote the agent.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Author string `json:"author,omitempty"`
	// Maintainer maintains it.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Maintainer string `json:"maintainer,omitempty"`
	// Homepage is its home page.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Homepage string `json:"homepage,omitempty"`
	// Repository is its source repository.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Repository string `json:"repository,omitempty"`
	// Documentation is its documentation.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Documentation string `json:"documentation,omitempty"`
	// License is its SPDX license identifier.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	License string `json:"license,omitempty"`
	// Keywords are search words.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=atomic
	Keywords []string `json:"keywords,omitempty"`
}
