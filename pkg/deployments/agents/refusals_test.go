package agents_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/agents"
	"opsnorth.io/scheduler/pkg/testkit"
)

func TestAgentRefusals(t *testing.T) {
	c := newClient(t)
	ns := newNamespace(t, c)
	startManager(t, ns)

	t.Run("an unsupported runtime stalls, creating nothing", func(t *testing.T) {
		require.NoError(t, c.Create(t.Context(), testkit.MakeAgent("lambda", ns).Runtime(ossav1.RuntimeServerless).Obj()))
		got := waitPhase(t, c, ns, "lambda", ossav1.AgentStalled, agents.ReasonUnsupportedRuntime)
		stalled := condition(got, "Stalled")
		assert.Contains(t, stalled, "True/UnsupportedRuntime")
		assert.Contains(t, stalled, `spec.agent.runtime.type "serverless"`)
		assert.Contains(t, condition(got, "Ready"), "False/UnsupportedRuntime")
		assert.Empty(t, condition(got, "Reconciling"))
		waitEvent(t, c, ns, "lambda", agents.ReasonUnsupportedRuntime, "serverless")
		assertNoDeployment(t, c, ns, "lambda")
		assert.Empty(t, children(t, c, ns, "lambda"))
	})

	t.Run("switching a running agent to edge deletes its children", func(t *testing.T) {
		require.NoError(t, c.Create(t.Context(), testkit.MakeAgent("mover", ns).Obj()))
		getDeployment(t, c, ns, "mover")
		updateAgent(t, c, ns, "mover", func(live *ossav1.Agent) {
			live.Spec.Agent.Runtime.Type = ossav1.RuntimeEdge
		})
		got := waitPhase(t, c, ns, "mover", ossav1.AgentStalled, agents.ReasonUnsupportedRuntime)
		assert.Contains(t, condition(got, "Stalled"), `"edge"`)
		assert.Empty(t, got.Status.Endpoint)
		require.Eventually(t, func() bool { return len(children(t, c, ns, "mover")) == 0 }, wait, 100*time.Millisecond,
			"children left: %v", children(t, c, ns, "mover"))
	})

	t.Run("an invalid capability schema stalls, naming the capability", func(t *testing.T) {
		require.NoError(t, c.Create(t.Context(), testkit.MakeAgent("broken", ns).Capabilities(
			testkit.Capability("answer", `{"type":"object"}`, `{"type":"object"}`),
			testkit.Capability("translate", `{"type":"object"}`, `{"type":17}`)).Obj()))
		got := waitPhase(t, c, ns, "broken", ossav1.AgentStalled, agents.ReasonInvalidCapabilitySchema)
		stalled := condition(got, "Stalled")
		assert.Contains(t, stalled, "True/InvalidCapabilitySchema")
		assert.Contains(t, stalled, `"translate"`)
		assert.Contains(t, stalled, "spec.agent.capabilities[1].output_schema")
		waitEvent(t, c, ns, "broken", agents.ReasonInvalidCapabilitySchema, "translate")
		assertNoDeployment(t, c, ns, "broken")
		assert.Empty(t, children(t, c, ns, "broken"))

		updateAgent(t, c, ns, "broken", func(live *ossav1.Agent) {
			live.Spec.Agent.Capabilities[1] = testkit.Capability("translate", `{"type":"object"}`, `{"type":"string"}`)
		})
		waitPhase(t, c, ns, "broken", ossav1.AgentProgressing, "")
		getDeployment(t, c, ns, "broken")
	})

	t.Run("a name another owner holds stalls", func(t *testing.T) {
		labels := map[string]string{"app": "theirs"}
		require.NoError(t, c.Create(t.Context(), &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: ns},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "theirs:1"}}}}},
		}))
		require.NoError(t, c.Create(t.Context(), testkit.MakeAgent("taken", ns).Obj()))
		got := waitPhase(t, c, ns, "taken", ossav1.AgentStalled, agents.ReasonChildConflict)
		assert.Contains(t, condition(got, "Stalled"), "Deployment "+ns+"/taken already belongs to")
		theirs := getDeployment(t, c, ns, "taken")
		assert.Equal(t, "theirs:1", theirs.Spec.Template.Spec.Containers[0].Image, "never applied over")
		assert.Empty(t, theirs.OwnerReferences)
	})
}
