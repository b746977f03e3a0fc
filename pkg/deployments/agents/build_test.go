package agents

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testkit"
)

// typed decodes a built child into its API type.
func typed[T any](t *testing.T, c render.Child) *T {
	t.Helper()
	u, err := c.Unstructured()
	require.NoError(t, err)
	out := new(T)
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out))
	return out
}

func deployment(t *testing.T, a *ossav1.Agent) *appsv1.Deployment {
	t.Helper()
	return deploymentIn(t, a, tiers.Tier{})
}

func deploymentIn(t *testing.T, a *ossav1.Agent, tier tiers.Tier) *appsv1.Deployment {
	t.Helper()
	caps, err := CapabilitiesJSON(a.Spec.Agent.Capabilities)
	require.NoError(t, err)
	return typed[appsv1.Deployment](t, Deployment(a, caps, tier))
}

func TestDeploymentContainer(t *testing.T) {
	a := testkit.MakeAgent("search", "team").Command("/agent", "--serve").
		Capabilities(testkit.Capability("answer", `{}`, `{}`), testkit.Capability("summarize", `{}`, `{}`)).Replicas(3).Obj()
	d := deployment(t, a)
	assert.Equal(t, "search", d.Name)
	assert.Equal(t, "team", d.Namespace)
	assert.Equal(t, ptr.To[int32](3), d.Spec.Replicas)
	assert.Equal(t, SelectorLabels(a), d.Spec.Selector.MatchLabels)
	assert.Equal(t, Labels(a), d.Spec.Template.Labels)

	pod := d.Spec.Template.Spec
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	assert.Equal(t, "ghcr.io/acme/agent:1", c.Image)
	assert.Equal(t, []string{"/agent", "--serve"}, c.Command)
	assert.Equal(t, []corev1.EnvVar{
		{Name: "OSSA_AGENT_ID", Value: "search"}, {Name: "OSSA_AGENT_NAME", Value: "Agent search"},
		{Name: "OSSA_AGENT_VERSION", Value: "1.0.0"}, {Name: "OSSA_AGENT_ROLE", Value: "chat"},
		{Name: "OSSA_CAPABILITIES", Value: "answer,summarize"}, {Name: "OSSA_CAPABILITIES_FILE", Value: CapabilitiesPath},
	}, c.Env)
	assert.Equal(t, []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}, c.Ports)
	assert.Nil(t, c.Resources.Requests, "no resources asked for")
	assert.Nil(t, c.LivenessProbe, "no health check")

	t.Run("capabilities mounted read-only", func(t *testing.T) {
		assert.Equal(t, []corev1.VolumeMount{{Name: capabilitiesVolume, MountPath: "/etc/ossa/capabilities.json",
			SubPath: CapabilitiesKey, ReadOnly: true}}, c.VolumeMounts)
		require.Len(t, pod.Volumes, 1)
		assert.Equal(t, "search-capabilities", pod.Volumes[0].ConfigMap.Name)
	})
	t.Run("restricted pod security", func(t *testing.T) {
		assert.Equal(t, ptr.To(false), c.SecurityContext.AllowPrivilegeEscalation)
		assert.Equal(t, ptr.To(true), c.SecurityContext.RunAsNonRoot)
		assert.Equal(t, []corev1.Capability{"ALL"}, c.SecurityContext.Capabilities.Drop)
		assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, pod.SecurityContext.SeccompProfile.Type)
		assert.Equal(t, ptr.To(false), pod.AutomountServiceAccountToken)
	})
	t.Run("a capability change rolls the pods", func(t *testing.T) {
		changed := a.DeepCopy()
		changed.Spec.Agent.Capabilities[0].InputSchema = runtime.RawExtension{Raw: []byte(`{"type":"string"}`)}
		before := d.Spec.Template.Annotations[render.AnnotationConfigHash]
		assert.NotEmpty(t, before)
		assert.NotEqual(t, before, deployment(t, changed).Spec.Template.Annotations[render.AnnotationConfigHash])
	})
}

func TestDeploymentResources(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name             string
		agent            *ossav1.Agent
		tier             tiers.Tier
		requests, limits corev1.ResourceList
	}{
		{name: "cpu and memory: memory limited to the request", agent: testkit.MakeAgent("a", "ns").Resources("500m", "512Mi", false).Obj(),
			requests: corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("512Mi")},
			limits:   corev1.ResourceList{corev1.ResourceMemory: q("512Mi")}},
		{name: "cpu only: no limit", agent: testkit.MakeAgent("a", "ns").Resources("1", "", false).Obj(),
			requests: corev1.ResourceList{corev1.ResourceCPU: q("1")}},
		{name: "gpu", agent: testkit.MakeAgent("a", "ns").Resources("", "1Gi", true).Obj(),
			requests: corev1.ResourceList{corev1.ResourceMemory: q("1Gi")},
			limits:   corev1.ResourceList{corev1.ResourceMemory: q("1Gi"), GPUResource: q("1")}},
		{name: "none", agent: testkit.MakeAgent("a", "ns").Obj()},
		{name: "cpu above the tier's default limit: limited to the request", tier: tiers.Defaults()["free"],
			agent:    testkit.MakeAgent("a", "ns").Resources("500m", "", false).Obj(),
			requests: corev1.ResourceList{corev1.ResourceCPU: q("500m")}, limits: corev1.ResourceList{corev1.ResourceCPU: q("500m")}},
		{name: "cpu within the tier's default limit: the LimitRange's", tier: tiers.Defaults()["free"],
			agent:    testkit.MakeAgent("a", "ns").Resources("250m", "", false).Obj(),
			requests: corev1.ResourceList{corev1.ResourceCPU: q("250m")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := deploymentIn(t, tt.agent, tt.tier).Spec.Template.Spec.Containers[0].Resources
			assert.Equal(t, tt.requests, r.Requests)
			assert.Equal(t, tt.limits, r.Limits)
		})
	}
}

func TestProbe(t *testing.T) {
	times := ossav1.HealthCheck{InitialDelaySeconds: ptr.To[int32](30), PeriodSeconds: ptr.To[int32](10),
		TimeoutSeconds: ptr.To[int32](5), FailureThreshold: ptr.To[int32](3)}
	with := func(hc ossav1.HealthCheck) ossav1.HealthCheck {
		hc.InitialDelaySeconds, hc.PeriodSeconds, hc.TimeoutSeconds, hc.FailureThreshold =
			times.InitialDelaySeconds, times.PeriodSeconds, times.TimeoutSeconds, times.FailureThreshold
		return hc
	}
	timing := corev1.Probe{InitialDelaySeconds: 30, PeriodSeconds: 10, TimeoutSeconds: 5, FailureThreshold: 3}
	probe := func(h corev1.ProbeHandler) *corev1.Probe { p := timing; p.ProbeHandler = h; return &p }
	tests := []struct {
		name  string
		agent *ossav1.Agent
		want  *corev1.Probe
		ports []corev1.ContainerPort
	}{
		{name: "http on the serving port", agent: testkit.MakeAgent("a", "ns").
			HealthCheck(with(ossav1.HealthCheck{Type: "http", Endpoint: "/healthz", Port: ptr.To[int32](9000)})).Obj(),
			want:  probe(corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(9000)}}),
			ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 9000, Protocol: corev1.ProtocolTCP}}},
		{name: "http, default path, own port", agent: testkit.MakeAgent("a", "ns").Port(8000).
			HealthCheck(with(ossav1.HealthCheck{Type: "http", Port: ptr.To[int32](9000)})).Obj(),
			want: probe(corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromInt32(9000)}}),
			ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8000, Protocol: corev1.ProtocolTCP},
				{Name: "health", ContainerPort: 9000, Protocol: corev1.ProtocolTCP}}},
		{name: "tcp", agent: testkit.MakeAgent("a", "ns").HealthCheck(with(ossav1.HealthCheck{Type: "tcp", Port: ptr.To[int32](7000)})).Obj(),
			want:  probe(corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(7000)}}),
			ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 7000, Protocol: corev1.ProtocolTCP}}},
		{name: "exec, serving port 8080", agent: testkit.MakeAgent("a", "ns").
			HealthCheck(with(ossav1.HealthCheck{Type: "exec", Command: []string{"/bin/check", "-q"}})).Obj(),
			want:  probe(corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/check", "-q"}}}),
			ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := deployment(t, tt.agent).Spec.Template.Spec.Containers[0]
			assert.Equal(t, tt.want, c.LivenessProbe)
			assert.Equal(t, tt.want, c.ReadinessProbe)
			assert.Equal(t, tt.ports, c.Ports)
		})
	}
}

func TestServicePort(t *testing.T) {
	hc := ossav1.HealthCheck{Type: "tcp", Port: ptr.To[int32](9000)}
	tests := []struct {
		name     string
		agent    *ossav1.Agent
		port     int32
		portName string
	}{
		{name: "spec.port wins", agent: testkit.MakeAgent("a", "ns").Port(7000).HealthCheck(hc).Obj(), port: 7000, portName: "http"},
		{name: "else the health check's port", agent: testkit.MakeAgent("a", "ns").HealthCheck(hc).Obj(), port: 9000, portName: "http"},
		{name: "else 8080", agent: testkit.MakeAgent("a", "ns").Obj(), port: 8080, portName: "http"},
		{name: "grpc names its port", agent: testkit.MakeAgent("a", "ns").Protocol("grpc").Obj(), port: 8080, portName: "grpc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := typed[corev1.Service](t, Service(tt.agent))
			assert.Equal(t, []corev1.ServicePort{{Name: tt.portName, Port: tt.port, Protocol: corev1.ProtocolTCP,
				TargetPort: intstr.FromString(tt.portName)}}, svc.Spec.Ports)
			assert.Equal(t, SelectorLabels(tt.agent), svc.Spec.Selector)
			assert.Equal(t, corev1.ServiceTypeClusterIP, svc.Spec.Type)
			assert.Equal(t, "http://a.ns.svc:"+itoa(tt.port), Endpoint(tt.agent))
		})
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func TestCapabilitiesJSON(t *testing.T) {
	a := []ossav1.Capability{testkit.Capability("answer", `{"type":"object","properties":{"q":{"type":"string","maxLength":1e3}}}`,
		`"https://schemas.example.com/answer.json"`)}
	b := []ossav1.Capability{testkit.Capability("answer", `{"properties":{"q":{"maxLength":1e3,"type":"string"}},"type":"object"}`,
		`"https://schemas.example.com/answer.json"`)}
	ja, err := CapabilitiesJSON(a)
	require.NoError(t, err)
	jb, err := CapabilitiesJSON(b)
	require.NoError(t, err)
	assert.Equal(t, ja, jb, "the same capabilities in another key order give the same bytes")
	assert.JSONEq(t, `[{"name":"answer","description":"does answer",
		"input_schema":{"type":"object","properties":{"q":{"type":"string","maxLength":1e3}}},
		"output_schema":"https://schemas.example.com/answer.json"}]`, ja)
	assert.Contains(t, ja, "1e3", "numbers are kept as written")

	cm := typed[corev1.ConfigMap](t, CapabilitiesConfigMap(testkit.MakeAgent("search", "ns").Obj(), ja))
	assert.Equal(t, "search-capabilities", cm.Name)
	assert.Equal(t, map[string]string{CapabilitiesKey: ja}, cm.Data)
}

func TestHPA(t *testing.T) {
	_, ok := HPA(testkit.MakeAgent("a", "ns").Obj())
	assert.False(t, ok, "no autoscaling, no HPA")

	tests := []struct {
		name     string
		agent    *ossav1.Agent
		resource []corev1.ResourceName
	}{
		{name: "cpu and memory", agent: testkit.MakeAgent("a", "ns").Autoscaling(2, 10, 70, 80).Obj(),
			resource: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}},
		{name: "memory only", agent: testkit.MakeAgent("a", "ns").Autoscaling(2, 10, 0, 80).Obj(),
			resource: []corev1.ResourceName{corev1.ResourceMemory}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := HPA(tt.agent)
			require.True(t, ok)
			h := typed[autoscalingv2.HorizontalPodAutoscaler](t, c)
			assert.Equal(t, autoscalingv2.CrossVersionObjectReference{APIVersion: "ossa.ai/v1", Kind: "Agent", Name: "a"},
				h.Spec.ScaleTargetRef, "the autoscaler scales the Agent, not its Deployment")
			assert.Equal(t, ptr.To[int32](2), h.Spec.MinReplicas)
			assert.Equal(t, int32(10), h.Spec.MaxReplicas)
			var got []corev1.ResourceName
			for _, m := range h.Spec.Metrics {
				assert.Equal(t, autoscalingv2.UtilizationMetricType, m.Resource.Target.Type)
				got = append(got, m.Resource.Name)
			}
			assert.Equal(t, tt.resource, got)
			assert.Equal(t, ptr.To[int32](80), h.Spec.Metrics[len(h.Spec.Metrics)-1].Resource.Target.AverageUtilization)
		})
	}
}

func TestChildren(t *testing.T) {
	a := testkit.MakeAgent("search", "team").WithUID("u-1").Autoscaling(1, 3, 50, 0).Metrics("/prom").Obj()
	kinds := func(cs []render.Child) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.GVK.Kind+"/"+c.Name)
		}
		return out
	}
	cs, err := Children(a, Options{ServiceMonitor: true, NetworkPolicy: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"NetworkPolicy/search", "ConfigMap/search-capabilities", "Deployment/search", "Service/search",
		"HorizontalPodAutoscaler/search", "ServiceMonitor/search"}, kinds(cs))
	without, err := Children(a, Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"ConfigMap/search-capabilities", "Deployment/search", "Service/search",
		"HorizontalPodAutoscaler/search"}, kinds(without), "no ServiceMonitor without its CRD, no NetworkPolicy when disabled")
	plain, err := Children(testkit.MakeAgent("search", "team").Obj(), Options{ServiceMonitor: true})
	require.NoError(t, err)
	assert.Len(t, plain, 3, "no HPA without autoscaling, no ServiceMonitor without monitoring.metrics")

	for _, c := range cs {
		u, err := c.Unstructured()
		require.NoError(t, err)
		assert.Equal(t, "team", u.GetNamespace(), c.Name)
		assert.Equal(t, map[string]string{"app.kubernetes.io/managed-by": "opsnorth-scheduler", labelkeys.Agent: "search",
			"app.kubernetes.io/part-of": "opsnorth-scheduler", "app.kubernetes.io/component": "agent",
			"app.kubernetes.io/instance": "search", "app.kubernetes.io/name": "search"}, u.GetLabels(), c.GVK.Kind)
		assert.Equal(t, []metav1.OwnerReference{{APIVersion: "ossa.ai/v1", Kind: "Agent", Name: "search", UID: "u-1",
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}, u.GetOwnerReferences(), c.GVK.Kind)
	}
	sm, err := cs[5].Unstructured()
	require.NoError(t, err)
	assert.Equal(t, []any{map[string]any{"port": "http", "path": "/prom"}}, sm.Object["spec"].(map[string]any)["endpoints"])
	assert.Equal(t, "app.kubernetes.io/managed-by=opsnorth-scheduler,scheduler.opsnorth.io/agent=search", Selector(a))
}

func TestUnsupportedRuntime(t *testing.T) {
	for _, rt := range []ossav1.RuntimeType{ossav1.RuntimeDocker, ossav1.RuntimeK8s} {
		assert.Empty(t, UnsupportedRuntime(testkit.MakeAgent("a", "ns").Runtime(rt).Obj()), rt)
	}
	for _, rt := range []ossav1.RuntimeType{ossav1.RuntimeLocal, ossav1.RuntimeServerless, ossav1.RuntimeEdge} {
		msg := UnsupportedRuntime(testkit.MakeAgent("a", "ns").Runtime(rt).Obj())
		assert.Contains(t, msg, "spec.agent.runtime.type")
		assert.Contains(t, msg, `"`+string(rt)+`"`)
	}
}
