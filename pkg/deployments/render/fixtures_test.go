package render

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
)

// udWrapper builds UserDeployments fluently for tests.
type udWrapper struct{ v1alpha1.UserDeployment }

func makeUD(name string) *udWrapper {
	return &udWrapper{v1alpha1.UserDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"},
		Spec: v1alpha1.UserDeploymentSpec{UserID: "alice", Tier: "pro", DesiredState: v1alpha1.DesiredRunning,
			Visibility: v1alpha1.VisibilityPublic},
	}}
}

func (w *udWrapper) template(t string) *udWrapper { w.Spec.Template = t; return w }
func (w *udWrapper) image(img string, port int32) *udWrapper {
	w.Spec.Image, w.Spec.ContainerPort = img, ptr.To(port)
	return w
}
func (w *udWrapper) replicas(n int32) *udWrapper { w.Spec.Replicas = ptr.To(n); return w }
func (w *udWrapper) internal() *udWrapper        { w.Spec.Visibility = v1alpha1.VisibilityInternal; return w }
func (w *udWrapper) stopped() *udWrapper         { w.Spec.DesiredState = v1alpha1.DesiredStopped; return w }
func (w *udWrapper) autoscale(lo, hi int32) *udWrapper {
	w.Spec.Autoscaling = &v1alpha1.Autoscaling{MinReplicas: lo, MaxReplicas: hi}
	return w
}
func (w *udWrapper) secret(name, key string) *udWrapper {
	w.Spec.Secrets = append(w.Spec.Secrets, v1alpha1.SecretReference{Name: name, RemoteRef: v1alpha1.RemoteSecretReference{Key: key, Property: "p"}})
	return w
}
func (w *udWrapper) obj() *v1alpha1.UserDeployment { return &w.UserDeployment }

func webApp() *v1alpha1.DeploymentTemplate {
	q := func(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }
	return &v1alpha1.DeploymentTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "web-app"},
		Spec: v1alpha1.DeploymentTemplateSpec{Services: []v1alpha1.TemplateService{
			{
				Name: "web", Image: "web:1", Env: []v1alpha1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "PORT", Value: "8080"}},
				Ports:  []v1alpha1.ServicePort{{Name: "http", Port: 8080, Protocol: "TCP"}, {Name: "metrics", Port: 9090}},
				Expose: "http", Replicas: ptr.To[int32](2),
				Resources: &v1alpha1.ResourceRequirements{Requests: &v1alpha1.ResourceAmounts{CPU: q("100m"), Memory: q("128Mi")},
					Limits: &v1alpha1.ResourceAmounts{Memory: q("512Mi"), Extended: map[string]resource.Quantity{"example.com/fpga": *q("1")}}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}}},
				Metrics:        &v1alpha1.MetricsEndpoint{Port: "metrics", Interval: "30s"},
			},
			{
				Name: "worker", Image: "worker:1", Command: []string{"/worker"},
				Storage: &v1alpha1.Storage{Size: resource.MustParse("10Gi"), MountPath: "/var/lib/worker"},
			},
			{
				Name: "admin", Image: "admin:1", Ports: []v1alpha1.ServicePort{{Name: "http", Port: 3000}}, Expose: "http",
			},
		}},
	}
}

func opts() Options {
	return Options{Domain: "apps.example.com", ClusterSecretStore: "vault", SecretKeyPrefix: DefaultSecretKeyPrefix, IngressEntryPoint: "websecure",
		CertResolver: "letsencrypt", PublicIngressClass: "public", InternalIngressClass: "internal",
		IngressControllerNamespace: "traefik", NetworkPolicies: true}
}

func app(t *testing.T, ud *v1alpha1.UserDeployment, tmpl *v1alpha1.DeploymentTemplate) *App {
	t.Helper()
	services, err := Services(ud, tmpl)
	require.NoError(t, err)
	return &App{UD: ud, Services: services, Tier: tiers.Defaults()["pro"], Namespace: "user-alice",
		Hosts: Hosts(ud, services, "apps.example.com")}
}

// field reads a nested field of a child in unstructured form.
func field(t *testing.T, c Child, path ...string) any {
	t.Helper()
	u, err := c.Unstructured()
	require.NoError(t, err)
	var cur any = u.Object
	for _, p := range path {
		m, ok := cur.(map[string]any)
		require.Truef(t, ok, "%v: %q is not an object", path, p)
		cur = m[p]
	}
	return cur
}
