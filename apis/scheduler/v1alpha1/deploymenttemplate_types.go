package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServiceType is how a template service is exposed inside the cluster.
// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
type ServiceType string

// DeploymentTemplateSpec lists the services an app made from this template runs.
type DeploymentTemplateSpec struct {
	// Description tells users what the template deploys.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Description string `json:"description,omitempty"`
	// Services are the workloads of the app, one Deployment and one Service each.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	Services []TemplateService `json:"services"`
}

// TemplateService is one workload of a template.
// +kubebuilder:validation:XValidation:rule="!has(self.expose) || (has(self.ports) && self.ports.exists(p, p.name == self.expose))",message="expose must name one of the service's ports",fieldPath=".expose"
// +kubebuilder:validation:XValidation:rule="!has(self.metrics) || (has(self.ports) && self.ports.exists(p, p.name == self.metrics.port))",message="metrics.port must name one of the service's ports",fieldPath=".metrics.port"
// +kubebuilder:validation:XValidation:rule="!has(self.readinessProbe) || [has(self.readinessProbe.httpGet), has(self.readinessProbe.tcpSocket), has(self.readinessProbe.exec), has(self.readinessProbe.grpc)].filter(x, x).size() == 1",message="readinessProbe must set exactly one of httpGet, tcpSocket, exec or grpc",fieldPath=".readinessProbe"
// +kubebuilder:validation:XValidation:rule="!has(self.livenessProbe) || [has(self.livenessProbe.httpGet), has(self.livenessProbe.tcpSocket), has(self.livenessProbe.exec), has(self.livenessProbe.grpc)].filter(x, x).size() == 1",message="livenessProbe must set exactly one of httpGet, tcpSocket, exec or grpc",fieldPath=".livenessProbe"
type TemplateService struct {
	// Name of the service; it names the Deployment, the Service and, for
	// extra exposed services, the host prefix.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// Image is the container image.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[^\s]+$`
	Image string `json:"image"`
	// Command overrides the image's entrypoint.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=4096
	Command []string `json:"command,omitempty"`
	// Args are the arguments to the entrypoint.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=4096
	Args []string `json:"args,omitempty"`
	// Env are literal environment variables; a user's configData overrides
	// variables of the same name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Env []EnvVar `json:"env,omitempty"`
	// Ports the container listens on.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Ports []ServicePort `json:"ports,omitempty"`
	// Expose names the port routed through the ingress; unset keeps the
	// service internal to the user's namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=15
	Expose string `json:"expose,omitempty"`
	// ServiceType of the Kubernetes Service.
	// +optional
	// +kubebuilder:default=ClusterIP
	ServiceType ServiceType `json:"serviceType,omitempty"`
	// Resources are the container's requests and limits; the tier's LimitRange
	// fills in what is left out.
	// +optional
	Resources *ResourceRequirements `json:"resources,omitempty"`
	// ReadinessProbe decides when a pod receives traffic.
	// +optional
	ReadinessProbe *corev1.Probe `json:"readinessProbe,omitempty"`
	// LivenessProbe decides when a container is restarted.
	// +optional
	LivenessProbe *corev1.Probe `json:"livenessProbe,omitempty"`
	// Replicas is the default number of pods; a UserDeployment's replicas overrides it.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Replicas *int32 `json:"replicas,omitempty"`
	// Storage adds a persistent volume to the service.
	// +optional
	Storage *Storage `json:"storage,omitempty"`
	// Metrics declares a Prometheus endpoint scraped through a ServiceMonitor.
	// +optional
	Metrics *MetricsEndpoint `json:"metrics,omitempty"`
}

// ServicePort is one port a container listens on.
type ServicePort struct {
	// Name of the port (an IANA service name: lowercase, at most 15 characters).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// Port number, used by both the container and the Service.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`
	// Protocol of the port.
	// +optional
	// +kubebuilder:default=TCP
	// +kubebuilder:validation:Enum=TCP;UDP;SCTP
	Protocol corev1.Protocol `json:"protocol,omitempty"`
}

// Storage is a persistent volume mounted into a service's container.
type Storage struct {
	// Size of the volume, e.g. 10Gi.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="storage size must be greater than zero"
	Size resource.Quantity `json:"size"`
	// MountPath is the absolute directory the volume is mounted at.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^/`
	MountPath string `json:"mountPath"`
	// StorageClassName selects the StorageClass; unset uses the cluster default.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	StorageClassName *string `json:"storageClassName,omitempty"`
	// WhenDeleted decides what happens to the volume claim when its app is
	// deleted or stops using it, in the manner of a StatefulSet's
	// persistentVolumeClaimRetentionPolicy: Retain (the default) keeps the
	// claim, lists it in the app's status.retainedClaims and attaches it
	// again if the app comes back; Delete deletes it with the app.
	// +optional
	// +kubebuilder:default=Retain
	// +kubebuilder:validation:Enum=Retain;Delete
	WhenDeleted ClaimRetention `json:"whenDeleted,omitempty"`
}

// ClaimRetention is what happens to a volume claim its app no longer uses.
type ClaimRetention string

const (
	// ClaimRetain keeps the claim and its data.
	ClaimRetain ClaimRetention = "Retain"
	// ClaimDelete deletes the claim, and with it (per its StorageClass's
	// reclaim policy) the data.
	ClaimDelete ClaimRetention = "Delete"
)

// MetricsEndpoint is where a service serves Prometheus metrics.
type MetricsEndpoint struct {
	// Port names the service port that serves metrics.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	Port string `json:"port"`
	// Path of the metrics endpoint.
	// +optional
	// +kubebuilder:default=/metrics
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^/`
	Path string `json:"path,omitempty"`
	// Interval between scrapes, e.g. 30s.
	// +optional
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`
	Interval string `json:"interval,omitempty"`
}

// DeploymentTemplateStatus is the observed state of a DeploymentTemplate.
type DeploymentTemplateStatus struct {
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions describe the template; Ready means it can be used.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// DeploymentTemplate is a reusable, cluster-wide recipe for a user's app: the
// services it runs, their ports, probes, resources, storage and metrics.
// UserDeployments name it in spec.template.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=udt;onudt,categories=opsnorth
// +kubebuilder:printcolumn:name="Services",type=string,JSONPath=`.spec.services[*].name`
// +kubebuilder:printcolumn:name="Description",type=string,JSONPath=`.spec.description`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type DeploymentTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the recipe.
	Spec DeploymentTemplateSpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status DeploymentTemplateStatus `json:"status,omitempty"`
}

// DeploymentTemplateList is a list of DeploymentTemplates.
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type DeploymentTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the DeploymentTemplates.
	Items []DeploymentTemplate `json:"items"`
}
