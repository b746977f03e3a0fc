package agents_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/agents"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testkit"
)

func TestAgentLifecycle(t *testing.T) {
	c := newClient(t)
	ns := newNamespace(t, c)
	mgr := startManager(t, ns)
	a := testkit.MakeAgent("search", ns).ID("search-agent").Version("1.4.2").Command("/agent", "serve").
		Resources("250m", "256Mi", false).Port(8000).Metrics("").
		HealthCheck(ossav1.HealthCheck{Type: "http", Endpoint: "/healthz", Port: ptr.To[int32](8000)}).
		Capabilities(testkit.Capability("answer", `{"type":"object","properties":{"q":{"type":"string"}}}`, `{"type":"string"}`),
			testkit.Capability("summarize", `"https://schemas.example.com/summarize.json"`, `{"type":"object"}`)).Obj()
	require.NoError(t, c.Create(t.Context(), a))

	t.Run("children", func(t *testing.T) {
		cm := &corev1.ConfigMap{}
		require.Eventually(t, func() bool {
			return c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "search-capabilities"}, cm) == nil
		}, wait, 100*time.Millisecond)
		assert.JSONEq(t, `[
			{"name":"answer","description":"does answer","input_schema":{"type":"object","properties":{"q":{"type":"string"}}},"output_schema":{"type":"string"},"timeout_seconds":300},
			{"name":"summarize","description":"does summarize","input_schema":"https://schemas.example.com/summarize.json","output_schema":{"type":"object"},"timeout_seconds":300}
		]`, cm.Data[agents.CapabilitiesKey])

		d := getDeployment(t, c, ns, "search")
		ctr := d.Spec.Template.Spec.Containers[0]
		assert.Equal(t, "ghcr.io/acme/agent:1", ctr.Image)
		assert.Equal(t, []string{"/agent", "serve"}, ctr.Command)
		env := map[string]string{}
		for _, e := range ctr.Env {
			env[e.Name] = e.Value
		}
		assert.Equal(t, "search-agent", env["OSSA_AGENT_ID"])
		assert.Equal(t, "1.4.2", env["OSSA_AGENT_VERSION"])
		assert.Equal(t, "answer,summarize", env["OSSA_CAPABILITIES"])
		assert.Equal(t, resource.MustParse("256Mi"), ctr.Resources.Limits[corev1.ResourceMemory])
		assert.Equal(t, resource.MustParse("250m"), ctr.Resources.Requests[corev1.ResourceCPU])
		assert.Equal(t, &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8000), Scheme: corev1.URISchemeHTTP},
			ctr.ReadinessProbe.HTTPGet)
		assert.Equal(t, int32(30), ctr.LivenessProbe.InitialDelaySeconds, "the CRD's OSSA default")
		assert.Equal(t, "/etc/ossa/capabilities.json", ctr.VolumeMounts[0].MountPath)
		assert.True(t, ctr.VolumeMounts[0].ReadOnly)
		assert.Equal(t, ptr.To(true), ctr.SecurityContext.RunAsNonRoot)

		var svc corev1.Service
		require.Eventually(t, func() bool {
			return c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "search"}, &svc) == nil
		}, wait, 50*time.Millisecond, "Service search")
		assert.Equal(t, int32(8000), svc.Spec.Ports[0].Port)
		assert.Equal(t, agents.SelectorLabels(a), svc.Spec.Selector)

		sm := getU(t, c, render.GVKServiceMonitor, ns, "search")
		assert.Equal(t, "search", sm.GetLabels()[labelkeys.Agent])

		live := getAgent(t, c, ns, "search")
		for _, obj := range []metav1.Object{cm, d, &svc, sm} {
			refs := obj.GetOwnerReferences()
			require.Len(t, refs, 1, obj.GetName())
			assert.Equal(t, metav1.OwnerReference{APIVersion: "ossa.ai/v1", Kind: "Agent", Name: "search", UID: live.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}, refs[0], "%T", obj)
			assert.Empty(t, live.Finalizers, "the garbage collector deletes the children")
		}
	})

	t.Run("progressing until the Deployment is ready", func(t *testing.T) {
		got := waitPhase(t, c, ns, "search", ossav1.AgentProgressing, agents.ReasonProgressing)
		assert.Contains(t, condition(got, "Reconciling"), "True/Progressing")
		assert.Empty(t, condition(got, "Stalled"))
		assert.Equal(t, "True/Resolved: no required dependencies", condition(got, ossav1.ConditionDependenciesReady))
	})

	t.Run("ready", func(t *testing.T) {
		markReady(t, c, ns, "search")
		got := waitPhase(t, c, ns, "search", ossav1.AgentReady, agents.ReasonReady)
		assert.Equal(t, "True/Ready: 1/1 replicas ready", condition(got, "Ready"))
		assert.Empty(t, condition(got, "Reconciling"))
		assert.Equal(t, int32(1), got.Status.ReadyReplicas)
		assert.Equal(t, int32(1), got.Status.Replicas)
		assert.Equal(t, "http://search."+ns+".svc:8000", got.Status.Endpoint)
		assert.Equal(t, int32(2), got.Status.CapabilityCount)
		assert.Equal(t, agents.Selector(a), got.Status.Selector)
		waitEvent(t, c, ns, "search", "Progressing", "phase Progressing")
		waitEvent(t, c, ns, "search", "Ready", "1/1 replicas ready")
	})

	t.Run("converged: no writes", func(t *testing.T) {
		before := reconciles(t)
		mgr.Requests.Reset()
		// A metadata change reconciles without changing anything.
		updateAgent(t, c, ns, "search", func(live *ossav1.Agent) {
			live.Annotations = map[string]string{"touch": "1"}
		})
		assertNoWrites(t, mgr, before)
	})

	// Restarted, the manager reconciles every Agent again: it finds the
	// applied children in its caches, the status in place, and writes
	// nothing. (Started here, not in a subtest, so it outlives one.)
	mgr.Stop(t)
	before := reconciles(t)
	mgr = startManager(t, ns)
	t.Run("no writes after a restart", func(t *testing.T) { assertNoWrites(t, mgr, before) })

	t.Run("a spec change rolls out; metrics off prunes the ServiceMonitor", func(t *testing.T) {
		updateAgent(t, c, ns, "search", func(live *ossav1.Agent) {
			live.Spec.Agent.Runtime.Image = "ghcr.io/acme/agent:2"
			live.Spec.Agent.Monitoring = nil
		})
		require.Eventually(t, func() bool {
			var d appsv1.Deployment
			return c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "search"}, &d) == nil &&
				d.Spec.Template.Spec.Containers[0].Image == "ghcr.io/acme/agent:2"
		}, wait, 100*time.Millisecond, "the new image; Agent status %+v", &getAgent(t, c, ns, "search").Status)
		require.Eventually(t, func() bool {
			return assert.ObjectsAreEqual([]string{"NetworkPolicy/search", "ConfigMap/search-capabilities", "Deployment/search",
				"Service/search"},
				children(t, c, ns, "search"))
		}, wait, 100*time.Millisecond, "children: %v", children(t, c, ns, "search"))
		waitPhase(t, c, ns, "search", ossav1.AgentProgressing, "")
		markReady(t, c, ns, "search")
		waitPhase(t, c, ns, "search", ossav1.AgentReady, "")
	})
}
