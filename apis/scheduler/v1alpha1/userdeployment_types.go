package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DesiredState is what the user wants of a deployment.
// +kubebuilder:validation:Enum=running;stopped;deleted
type DesiredState string

// Desired states.
const (
	DesiredRunning DesiredState = "running"
	DesiredStopped DesiredState = "stopped"
	DesiredDeleted DesiredState = "deleted"
)

// Visibility decides who can reach a deployment's URLs.
// +kubebuilder:validation:Enum=public;internal
type Visibility string

// Visibilities.
const (
	VisibilityPublic   Visibility = "public"
	VisibilityInternal Visibility = "internal"
)

// DeploymentPhase is where a UserDeployment is.
// +kubebuilder:validation:Enum=pending;provisioning;ready;stopped;error;deleting;deleted
type DeploymentPhase string

// Deployment phases.
const (
	PhasePending      DeploymentPhase = "pending"
	PhaseProvisioning DeploymentPhase = "provisioning"
	PhaseReady        DeploymentPhase = "ready"
	PhaseStopped      DeploymentPhase = "stopped"
	PhaseError        DeploymentPhase = "error"
	PhaseDeleting     DeploymentPhase = "deleting"
	PhaseDeleted      DeploymentPhase = "deleted"
)

// UserDeploymentSpec describes a user's long-lived app.
// +kubebuilder:validation:XValidation:rule="has(self.template) != has(self.image)",message="exactly one of spec.template or spec.image must be set"
// +kubebuilder:validation:XValidation:rule="has(self.image) == has(self.containerPort)",message="spec.containerPort is required with spec.image and not allowed with spec.template",fieldPath=".containerPort"
// +kubebuilder:validation:XValidation:rule="!(has(self.replicas) && has(self.autoscaling))",message="spec.replicas and spec.autoscaling are mutually exclusive: the autoscaler owns the replica count",fieldPath=".autoscaling"
type UserDeploymentSpec struct {
	// UserID owns the deployment; its children live in the namespace
	// <prefix>-<userId>. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="userId is immutable"
	UserID string `json:"userId"`
	// Template names the DeploymentTemplate to run. Exactly one of template and image.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Template string `json:"template,omitempty"`
	// Image runs a single container image as a one-service app. Exactly one of
	// template and image; needs containerPort.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[^\s]+$`
	Image string `json:"image,omitempty"`
	// ContainerPort is the port the image listens on; it is exposed through the ingress.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	ContainerPort *int32 `json:"containerPort,omitempty"`
	// Tier selects the resource quota and limits of the user's namespace
	// (for example free, pro, enterprise; the manager's tier configuration lists them).
	// +optional
	// +kubebuilder:default=free
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Tier string `json:"tier,omitempty"`
	// DesiredState is running, stopped (scaled to zero, config kept) or
	// deleted (every child removed; the resource stays with phase deleted).
	// +optional
	// +kubebuilder:default=running
	DesiredState DesiredState `json:"desiredState,omitempty"`
	// Secrets are synced from the cluster secret store through an
	// ExternalSecret and injected as environment variables.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Secrets []SecretReference `json:"secrets,omitempty"`
	// ConfigData are environment variables for every service.
	// +optional
	ConfigData EnvMap `json:"configData,omitempty"`
	// ConfigFile is one file mounted into every service.
	// +optional
	//
	// Deprecated: use configFiles.
	ConfigFile *ConfigFile `json:"configFile,omitempty"`
	// ConfigFiles are files mounted read-only into every service.
	// +optional
	// +listType=map
	// +listMapKey=path
	// +kubebuilder:validation:MaxItems=32
	ConfigFiles []ConfigFile `json:"configFiles,omitempty"`
	// ServiceConfigData are environment variables for one service, keyed by
	// service name; they override configData.
	// +optional
	// +kubebuilder:validation:MaxProperties=20
	// +kubebuilder:validation:XValidation:rule="self.all(s, s.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(s) <= 40)",message="serviceConfigData must be keyed by service name"
	ServiceConfigData map[string]EnvMap `json:"serviceConfigData,omitempty"`
	// ServiceConfigFiles are files mounted into one service, keyed by service name.
	// +optional
	// +kubebuilder:validation:MaxProperties=20
	// +kubebuilder:validation:XValidation:rule="self.all(s, s.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(s) <= 40)",message="serviceConfigFiles must be keyed by service name"
	ServiceConfigFiles map[string]ConfigFileList `json:"serviceConfigFiles,omitempty"`
	// Replicas overrides the template's replica count for every service.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Replicas *int32 `json:"replicas,omitempty"`
	// Visibility public serves <name>.<domain> to everyone; internal serves
	// <name>.int.<domain> through the internal ingress only.
	// +optional
	// +kubebuilder:default=public
	Visibility Visibility `json:"visibility,omitempty"`
	// DependsOn names other UserDeployments in this namespace that must be
	// ready before this one is provisioned.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	DependsOn []string `json:"dependsOn,omitempty"`
	// Autoscaling adds a HorizontalPodAutoscaler to every service.
	// +optional
	Autoscaling *Autoscaling `json:"autoscaling,omitempty"`
}

// EnvMap are environment variables by name.
// +kubebuilder:validation:MaxProperties=128
// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z_][A-Za-z0-9_]*$') && size(k) <= 128)",message="keys must be environment variable names: letters, digits and '_', not starting with a digit, at most 128 characters"
type EnvMap map[string]string

// ConfigFileList is a list of files mounted into one service.
// +kubebuilder:validation:MaxItems=32
type ConfigFileList []ConfigFile

// SecretReference injects one value of the cluster secret store as an
// environment variable.
type SecretReference struct {
	// Name of the environment variable (and key of the synced Secret).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	Name string `json:"name"`
	// RemoteRef locates the value in the secret store.
	RemoteRef RemoteSecretReference `json:"remoteRef"`
}

// RemoteSecretReference is the ExternalSecret remoteRef of one value.
type RemoteSecretReference struct {
	// Key of the secret in the store, relative to the user's prefix (the
	// deployments manager's --secret-key-prefix, by default users/<userId>/):
	// a path without a leading '/' and without empty, '.' or '..' segments.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|/)[.]*(/|$)')",message="key must be a relative path without a leading '/' and without empty, '.' or '..' segments: it is resolved under the user's secret key prefix"
	Key string `json:"key"`
	// Property selects one field of a structured secret.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|/)[.]*(/|$)')",message="property must not start with '/' or have empty, '.' or '..' segments"
	Property string `json:"property,omitempty"`
	// Version of the secret in the store; unset means the latest.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|/)[.]*(/|$)')",message="version must not start with '/' or have empty, '.' or '..' segments"
	Version string `json:"version,omitempty"`
}

// Autoscaling scales every service on CPU utilization.
// +kubebuilder:validation:XValidation:rule="self.minReplicas <= self.maxReplicas",message="autoscaling.minReplicas must not exceed autoscaling.maxReplicas"
type Autoscaling struct {
	// MinReplicas is the fewest pods per service.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MinReplicas int32 `json:"minReplicas"`
	// MaxReplicas is the most pods per service.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxReplicas int32 `json:"maxReplicas"`
	// TargetCPUUtilizationPercentage is the average CPU use, as a percentage
	// of the request, the autoscaler aims for.
	// +optional
	// +kubebuilder:default=80
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	TargetCPUUtilizationPercentage int32 `json:"targetCPUUtilizationPercentage,omitempty"`
}

// IngressStatus is one URL a deployment is served on.
type IngressStatus struct {
	// Service is the template service behind the URL.
	Service string `json:"service"`
	// Host is the DNS name routed to the service.
	Host string `json:"host"`
	// URL is the full address, e.g. https://app.apps.example.com.
	URL string `json:"url"`
	// Visibility of the URL.
	Visibility Visibility `json:"visibility"`
}

// UserDeploymentStatus is the observed state of a UserDeployment.
type UserDeploymentStatus struct {
	// Phase is pending, provisioning, ready, stopped, error, deleting or deleted.
	// +optional
	Phase DeploymentPhase `json:"phase,omitempty"`
	// LastError is the most recent error, empty once resolved.
	// +optional
	LastError string `json:"lastError,omitempty"`
	// Ingresses are the URLs the app is served on.
	// +optional
	// +listType=map
	// +listMapKey=service
	Ingresses []IngressStatus `json:"ingresses,omitempty"`
	// Namespace is the user namespace the children live in.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// ReadyReplicas is the sum of ready pods over the app's Deployments.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// RetainedClaims are the app's volume claims kept (storage.whenDeleted:
	// Retain) although no running service uses them; they are attached
	// again when a service of the same name comes back.
	// +optional
	// +listType=set
	RetainedClaims []string `json:"retainedClaims,omitempty"`
	// LastReconcile is when the manager last changed the app's children.
	// +optional
	LastReconcile *metav1.Time `json:"lastReconcile,omitempty"`
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Ready, Reconciling and Stalled (kstatus) plus specific
	// ones: TemplateResolved, DependenciesReady, IngressReady.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// UserDeployment is a user's long-lived app, made from a DeploymentTemplate or
// a single image, in the user's own namespace and served on its own URLs.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS label (at most 63 lowercase letters, digits and '-'): it is the app's host name"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.dependsOn) || !(self.metadata.name in self.spec.dependsOn)",message="spec.dependsOn cannot name the deployment itself",fieldPath=".spec.dependsOn"
// +kubebuilder:resource:scope=Namespaced,shortName=ud;onud,categories=opsnorth
// +kubebuilder:selectablefield:JSONPath=`.spec.userId`
// +kubebuilder:selectablefield:JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="User",type=string,JSONPath=`.spec.userId`
// +kubebuilder:printcolumn:name="Template",type=string,JSONPath=`.spec.template`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`,priority=1
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.ingresses[0].url`
// +kubebuilder:printcolumn:name="Error",type=string,JSONPath=`.status.lastError`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type UserDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the app the user wants.
	Spec UserDeploymentSpec `json:"spec"`
	// Status is what runs.
	// +optional
	Status UserDeploymentStatus `json:"status,omitempty"`
}

// UserDeploymentList is a list of UserDeployments.
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type UserDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the UserDeployments.
	Items []UserDeployment `json:"items"`
}
