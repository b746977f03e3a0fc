package agents_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/agents"
	"opsnorth.io/scheduler/pkg/testkit"
)

func TestAgentAutoscaling(t *testing.T) {
	c := newClient(t)
	ns := newTierNamespace(t, c, "pro") // autoscaling up to 10
	startManager(t, ns)
	require.NoError(t, c.Create(t.Context(), testkit.MakeAgent("worker", ns).Resources("500m", "512Mi", false).
		Autoscaling(2, 10, 70, 80).Replicas(2).Obj()))

	t.Run("the HPA scales the Agent", func(t *testing.T) {
		var hpa autoscalingv2.HorizontalPodAutoscaler
		require.Eventually(t, func() bool {
			return c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "worker"}, &hpa) == nil
		}, wait, 100*time.Millisecond)
		assert.Equal(t, autoscalingv2.CrossVersionObjectReference{APIVersion: "ossa.ai/v1", Kind: "Agent", Name: "worker"},
			hpa.Spec.ScaleTargetRef)
		assert.Equal(t, ptr.To[int32](2), hpa.Spec.MinReplicas)
		assert.Equal(t, int32(10), hpa.Spec.MaxReplicas)
		require.Len(t, hpa.Spec.Metrics, 2)
		assert.Equal(t, corev1.ResourceCPU, hpa.Spec.Metrics[0].Resource.Name)
		assert.Equal(t, ptr.To[int32](70), hpa.Spec.Metrics[0].Resource.Target.AverageUtilization)
		assert.Equal(t, corev1.ResourceMemory, hpa.Spec.Metrics[1].Resource.Name)
		assert.Equal(t, ptr.To[int32](80), hpa.Spec.Metrics[1].Resource.Target.AverageUtilization)
		assert.Equal(t, ptr.To[int32](2), getDeployment(t, c, ns, "worker").Spec.Replicas)
	})

	t.Run("the scale subresource drives the Deployment", func(t *testing.T) {
		markReady(t, c, ns, "worker")
		waitPhase(t, c, ns, "worker", ossav1.AgentReady, "")

		// What kubectl scale and the autoscaler do.
		agent := getAgent(t, c, ns, "worker")
		scale := &autoscalingv1.Scale{}
		require.NoError(t, c.SubResource("scale").Get(t.Context(), agent, scale))
		assert.Equal(t, int32(2), scale.Spec.Replicas)
		assert.Equal(t, int32(2), scale.Status.Replicas)
		assert.Equal(t, agents.Selector(agent), scale.Status.Selector, "the autoscaler finds the pods")
		scale.Spec.Replicas = 4
		require.NoError(t, c.SubResource("scale").Update(t.Context(), agent, client.WithSubResourceBody(scale)))

		require.Eventually(t, func() bool {
			var d appsv1.Deployment
			return c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "worker"}, &d) == nil && *d.Spec.Replicas == 4
		}, wait, 100*time.Millisecond, "the Deployment follows spec.replicas")
		got := waitPhase(t, c, ns, "worker", ossav1.AgentProgressing, "")
		assert.Contains(t, condition(got, "Ready"), "/4 replicas ready")
		markReady(t, c, ns, "worker")
		got = waitPhase(t, c, ns, "worker", ossav1.AgentReady, "")
		assert.Equal(t, int32(4), got.Status.Replicas)
		assert.Equal(t, int32(4), got.Status.ReadyReplicas)
	})

	t.Run("autoscaling off deletes the HPA", func(t *testing.T) {
		updateAgent(t, c, ns, "worker", func(live *ossav1.Agent) {
			live.Spec.Autoscaling = nil
		})
		require.Eventually(t, func() bool {
			return assert.ObjectsAreEqual([]string{"NetworkPolicy/worker", "ConfigMap/worker-capabilities", "Deployment/worker",
				"Service/worker"},
				children(t, c, ns, "worker"))
		}, wait, 100*time.Millisecond, "children: %v", children(t, c, ns, "worker"))
	})
}
