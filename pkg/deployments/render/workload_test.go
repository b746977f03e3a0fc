package render

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
)

func TestEnvAndFiles(t *testing.T) {
	ud := makeUD("shop").template("web-app").obj()
	ud.Spec.ConfigData = v1alpha1.EnvMap{"LOG_LEVEL": "debug", "CURRENCY": "EUR"}
	ud.Spec.ServiceConfigData = map[string]v1alpha1.EnvMap{"web": {"CURRENCY": "USD"}}
	ud.Spec.ConfigFile = &v1alpha1.ConfigFile{Path: "/etc/a.yaml", Content: "old"} //nolint:staticcheck // the deprecated field is still honoured.
	ud.Spec.ConfigFiles = []v1alpha1.ConfigFile{{Path: "/etc/a.yaml", Content: "new"}, {Path: "/etc/b.yaml", Content: "b"}}
	ud.Spec.ServiceConfigFiles = map[string]v1alpha1.ConfigFileList{"web": {{Path: "/etc/b.yaml", Content: "web-b"}}}
	web := webApp().Spec.Services[0]

	assert.Equal(t, map[string]string{"LOG_LEVEL": "debug", "PORT": "8080", "CURRENCY": "USD"}, Env(ud, web))
	assert.Equal(t, []File{{Path: "/etc/a.yaml", Key: "file-" + Hash("/etc/a.yaml", 12), Content: "new"},
		{Path: "/etc/b.yaml", Key: "file-" + Hash("/etc/b.yaml", 12), Content: "web-b"}}, Files(ud, "web"))
	assert.Equal(t, "b", Files(ud, "worker")[1].Content)

	cms := ConfigMaps(app(t, ud, webApp()), web)
	require.Len(t, cms, 2)
	assert.Equal(t, "shop-web-env", cms[0].Name)
	assert.Equal(t, "USD", cms[0].Object.(*corev1ac.ConfigMapApplyConfiguration).Data["CURRENCY"])
	assert.Equal(t, "shop-web-files", cms[1].Name)

	before := ConfigHash(ud, web)
	ud.Spec.ConfigData["LOG_LEVEL"] = "warn"
	assert.NotEqual(t, before, ConfigHash(ud, web), "config changes roll the pods")
}

func TestDeployment(t *testing.T) {
	ud := makeUD("shop").template("web-app").secret("DB", "users/alice").obj()
	ud.Spec.ConfigFiles = []v1alpha1.ConfigFile{{Path: "/etc/a.yaml", Content: "a"}}
	a := app(t, ud, webApp())
	c, err := Deployment(a, a.Services[0])
	require.NoError(t, err)
	d := c.Object.(*appsv1ac.DeploymentApplyConfiguration)
	assert.Equal(t, "shop-web", *d.Name)
	assert.Equal(t, int32(2), *d.Spec.Replicas)
	assert.Equal(t, map[string]string{"scheduler.opsnorth.io/user-deployment": "team.shop", "scheduler.opsnorth.io/service": "web"},
		d.Spec.Selector.MatchLabels)
	pod := d.Spec.Template.Spec
	assert.Equal(t, ptr.To(true), pod.SecurityContext.RunAsNonRoot)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, *pod.SecurityContext.SeccompProfile.Type)
	assert.Equal(t, ptr.To(false), pod.AutomountServiceAccountToken)
	ctr := pod.Containers[0]
	assert.Equal(t, "web:1", *ctr.Image)
	assert.Equal(t, ptr.To(false), ctr.SecurityContext.AllowPrivilegeEscalation)
	assert.Equal(t, []corev1.Capability{"ALL"}, ctr.SecurityContext.Capabilities.Drop)
	assert.Equal(t, "shop-web-env", *ctr.EnvFrom[0].ConfigMapRef.Name)
	assert.Equal(t, "shop-secrets", *ctr.EnvFrom[1].SecretRef.Name)
	assert.Equal(t, "/etc/a.yaml", *ctr.VolumeMounts[0].MountPath)
	assert.Equal(t, "/readyz", *ctr.ReadinessProbe.HTTPGet.Path)
	assert.Equal(t, "128Mi", ptr.To((*ctr.Resources.Requests)[corev1.ResourceMemory]).String())
	assert.Equal(t, "1", ptr.To((*ctr.Resources.Limits)["example.com/fpga"]).String(), "extended resources")
	assert.Equal(t, "http", *ctr.Ports[0].Name)
	assert.Equal(t, "shop-web-files", *pod.Volumes[0].ConfigMap.Name)

	worker, err := Deployment(a, a.Services[1])
	require.NoError(t, err)
	w := worker.Object.(*appsv1ac.DeploymentApplyConfiguration)
	assert.Equal(t, "Recreate", string(*w.Spec.Strategy.Type))
	assert.Equal(t, "shop-worker-data", *w.Spec.Template.Spec.Volumes[1].PersistentVolumeClaim.ClaimName)
	assert.Equal(t, "/var/lib/worker", *w.Spec.Template.Spec.Containers[0].VolumeMounts[1].MountPath)

	scaled := app(t, makeUD("shop").template("web-app").autoscale(2, 4).obj(), webApp())
	c, err = Deployment(scaled, scaled.Services[0])
	require.NoError(t, err)
	assert.Nil(t, c.Object.(*appsv1ac.DeploymentApplyConfiguration).Spec.Replicas, "the autoscaler owns replicas")
	hpa, ok := HPA(scaled, scaled.Services[0])
	require.True(t, ok)
	assert.Equal(t, int64(4), field(t, hpa, "spec", "maxReplicas"))
	assert.Equal(t, "shop-web", field(t, hpa, "spec", "scaleTargetRef").(map[string]any)["name"])
}

func TestServiceAndPVC(t *testing.T) {
	a := app(t, makeUD("shop").template("web-app").obj(), webApp())
	svc, ok := Service(a, a.Services[0])
	require.True(t, ok)
	s := svc.Object.(*corev1ac.ServiceApplyConfiguration)
	assert.Equal(t, corev1.ServiceTypeClusterIP, *s.Spec.Type)
	assert.Equal(t, int32(8080), *s.Spec.Ports[0].Port)
	assert.Equal(t, "http", s.Spec.Ports[0].TargetPort.StrVal)
	_, ok = Service(a, a.Services[1])
	assert.False(t, ok, "a service without ports has no Service")

	pvc, ok := PVC(a, a.Services[1])
	require.True(t, ok)
	assert.Equal(t, "10Gi", field(t, pvc, "spec", "resources", "requests").(map[string]any)["storage"])
	_, ok = PVC(a, a.Services[0])
	assert.False(t, ok)
}

func TestNamespaceQuotaLimitRange(t *testing.T) {
	ns := Namespace("user-alice", "alice", true, "")
	assert.Equal(t, "restricted", field(t, ns, "metadata", "labels").(map[string]any)[PodSecurityEnforce])
	assert.Equal(t, "opsnorth-scheduler-deployments", field(t, ns, "metadata", "annotations").(map[string]any)[AnnotationCreatedNamespace])
	assert.Nil(t, field(t, Namespace("user-alice", "alice", false, ""), "metadata", "annotations"))
	assert.Equal(t, map[string]any{AnnotationRestore: "{}"}, field(t, Namespace("user-alice", "alice", false, "{}"), "metadata", "annotations"))
	inv := field(t, Inventory("user-alice", "alice"), "spec", "hard").(map[string]any)
	assert.Len(t, inv, len(InventoryCounts))
	assert.Equal(t, "1M", inv["count/secrets"])

	free := tiers.Defaults()["free"]
	q := Quota("user-alice", "alice", "free", free)
	assert.Equal(t, "10", field(t, q, "spec", "hard").(map[string]any)["pods"])
	lr := LimitRange("user-alice", "alice", "free", free)
	item := field(t, lr, "spec", "limits").([]any)[0].(map[string]any)
	assert.Equal(t, "Container", item["type"])
	assert.Equal(t, "1Gi", item["max"].(map[string]any)["memory"])
	assert.Equal(t, "50m", item["defaultRequest"].(map[string]any)["cpu"])
}

// TestUnstructuredRoundTrip checks that a typed child converts to the same
// object the apiserver would decode.
func TestUnstructuredRoundTrip(t *testing.T) {
	a := app(t, makeUD("hello").image("hello:2", 8080).obj(), nil)
	c, err := Deployment(a, a.Services[0])
	require.NoError(t, err)
	u, err := c.Unstructured()
	require.NoError(t, err)
	assert.Equal(t, "apps/v1", u.GetAPIVersion())
	assert.Equal(t, "Deployment", u.GetKind())
	var back map[string]any
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &back))
	assert.Equal(t, u.Object, back)
}
