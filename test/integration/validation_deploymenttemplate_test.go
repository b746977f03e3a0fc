package integration

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// invalidDeploymentTemplateCases break one DeploymentTemplate rule each.
func invalidDeploymentTemplateCases() []invalidCase {
	return []invalidCase{
		{
			name:  "template without services",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services = []schedulerv1alpha1.TemplateService{} }),
			field: "spec.services", msg: "should have at least 1 items",
		},
		{
			name:  "template missing services",
			obj:   newDeploymentTemplate(nil),
			unset: []string{"spec.services"},
			field: "spec.services", msg: "Required value",
		},
		{
			name:  "template service name uppercase",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[1].Name = "Worker" }),
			field: "spec.services[1].name", msg: "should match '^[a-z]([-a-z0-9]*[a-z0-9])?$'",
		},
		{
			name:  "template service name too long",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[1].Name = strings.Repeat("w", 41) }),
			field: "spec.services[1].name", msg: "may not be more than 40",
		},
		{
			name:  "template duplicate service names",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[1].Name = "web" }),
			field: "spec.services[1]", msg: "Duplicate value",
		},
		{
			name:  "template image with spaces",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[1].Image = "worker latest" }),
			field: "spec.services[1].image", msg: "should match",
		},
		{
			name: "template port name uppercase",
			obj: newDeploymentTemplate(func(d *deploymentTemplate) {
				// metrics.port follows the rename, so only the pattern is broken.
				d.Spec.Services[0].Ports[1].Name, d.Spec.Services[0].Metrics.Port = "Metrics", "Metrics"
			}),
			field: "spec.services[0].ports[1].name", msg: "should match",
		},
		{
			name:  "template port above 65535",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[0].Ports[0].Port = 70000 }),
			field: "spec.services[0].ports[0].port", msg: "should be less than or equal to 65535",
		},
		{
			name:  "template port protocol not an enum value",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[0].Ports[0].Protocol = "HTTP" }),
			field: "spec.services[0].ports[0].protocol", msg: `Unsupported value: "HTTP"`,
		},
		{
			name:  "template serviceType not an enum value",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[0].ServiceType = "ExternalName" }),
			field: "spec.services[0].serviceType", msg: `Unsupported value: "ExternalName"`,
		},
		{
			name:  "template env name not an env name",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[0].Env[0].Name = "log-level" }),
			field: "spec.services[0].env[0].name", msg: "should match",
		},
		{
			name:  "template expose names a missing port",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[0].Expose = "https" }),
			field: "spec.services[0].expose", msg: "expose must name one of the service's ports",
		},
		{
			name:  "template expose on a service without ports",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[1].Expose = "http" }),
			field: "spec.services[1].expose", msg: "expose must name one of the service's ports",
		},
		{
			name:  "template metrics port names a missing port",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[0].Metrics.Port = "prom" }),
			field: "spec.services[0].metrics.port", msg: "metrics.port must name one of the service's ports",
		},
		{
			name:  "template metrics path relative",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[0].Metrics.Path = "metrics" }),
			field: "spec.services[0].metrics.path", msg: "should match '^/'",
		},
		{
			name:  "template metrics interval not a duration",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[0].Metrics.Interval = "30 seconds" }),
			field: "spec.services[0].metrics.interval", msg: "should match",
		},
		{
			name: "template readiness probe with two handlers",
			obj: newDeploymentTemplate(func(d *deploymentTemplate) {
				d.Spec.Services[0].ReadinessProbe.TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromString("http")}
			}),
			field: "spec.services[0].readinessProbe", msg: "readinessProbe must set exactly one of httpGet, tcpSocket, exec or grpc",
		},
		{
			name: "template liveness probe without a handler",
			obj: newDeploymentTemplate(func(d *deploymentTemplate) {
				d.Spec.Services[0].LivenessProbe = &corev1.Probe{PeriodSeconds: 10}
			}),
			field: "spec.services[0].livenessProbe", msg: "livenessProbe must set exactly one of httpGet, tcpSocket, exec or grpc",
		},
		{
			name:  "template cpu request above limit",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[0].Resources.Requests.CPU = quantity("750m") }),
			field: "spec.services[0].resources", msg: "each request must not exceed the limit of the same resource",
		},
		{
			name:  "template replicas above 100",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[0].Replicas = ptr.To[int32](101) }),
			field: "spec.services[0].replicas", msg: "should be less than or equal to 100",
		},
		{
			name:  "template storage size zero",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[1].Storage.Size = resource.MustParse("0") }),
			field: "spec.services[1].storage.size", msg: "storage size must be greater than zero",
		},
		{
			name:  "template storage size negative",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[1].Storage.Size = resource.MustParse("-1Gi") }),
			field: "spec.services[1].storage.size", msg: "storage size must be greater than zero",
		},
		{
			name:  "template storage mountPath relative",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Services[1].Storage.MountPath = "data" }),
			field: "spec.services[1].storage.mountPath", msg: "should match '^/'",
		},
		{
			name:  "template description too long",
			obj:   newDeploymentTemplate(func(d *deploymentTemplate) { d.Spec.Description = strings.Repeat("d", 1025) }),
			field: "spec.description", msg: "may not be more than 1024",
		},
	}
}
