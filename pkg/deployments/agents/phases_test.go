package agents

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/testkit"
)

// TestCheckCapabilitiesOncePerGeneration: the costly schema check runs for
// a generation the status has not observed; for one it has, the Stalled
// condition is its outcome.
func TestCheckCapabilitiesOncePerGeneration(t *testing.T) {
	invalid := testkit.MakeAgent("a", "ns").Capabilities(testkit.Capability("answer", `{"type":17}`, `{}`)).Obj()
	invalid.Generation = 2
	scopeOf := func(a *ossav1.Agent) *scope { return &scope{agent: a, status: *a.Status.DeepCopy()} }

	t.Run("a new generation is checked", func(t *testing.T) {
		done, err := (&Reconciler{}).checkCapabilities(t.Context(), scopeOf(invalid))
		assert.True(t, done)
		st, ok := errors.AsType[*stalledError](err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, ReasonInvalidCapabilitySchema, st.reason)
		assert.Contains(t, st.msg, `capability "answer"`)
		assert.Contains(t, st.msg, "spec.agent.capabilities[0].input_schema")
		assert.True(t, st.prune)
	})
	t.Run("an observed generation without a stall is not checked again", func(t *testing.T) {
		a := invalid.DeepCopy()
		a.Status = ossav1.AgentStatus{Phase: ossav1.AgentReady, ObservedGeneration: 2}
		done, err := (&Reconciler{}).checkCapabilities(t.Context(), scopeOf(a))
		assert.False(t, done)
		assert.NoError(t, err)
	})
	t.Run("an observed stall is kept without checking", func(t *testing.T) {
		a := testkit.MakeAgent("a", "ns").Obj() // valid schemas: the outcome comes from the status
		a.Generation = 2
		a.Status = ossav1.AgentStatus{Phase: ossav1.AgentStalled, ObservedGeneration: 2, Conditions: []metav1.Condition{
			{Type: conditionStalled, Status: metav1.ConditionTrue, Reason: ReasonInvalidCapabilitySchema, Message: "earlier check", ObservedGeneration: 2}}}
		s := scopeOf(a)
		_, err := (&Reconciler{}).checkCapabilities(t.Context(), s)
		st, ok := errors.AsType[*stalledError](err)
		require.True(t, ok)
		assert.Equal(t, "earlier check", st.msg)
		assert.True(t, s.stalledAlready(ReasonInvalidCapabilitySchema, "earlier check"))
		assert.Equal(t, int32(1), s.status.CapabilityCount)
	})
	t.Run("a new generation with the capabilities that passed is not checked again", func(t *testing.T) {
		r := &Reconciler{}
		a := testkit.MakeAgent("a", "ns").WithUID("u1").Obj()
		a.Generation = 3
		_, err := r.checkCapabilities(t.Context(), scopeOf(a))
		require.NoError(t, err)

		scaled := a.DeepCopy()
		scaled.Generation, scaled.Spec.Replicas = 4, ptr.To[int32](3)
		_, err = r.checkCapabilities(t.Context(), scopeOf(scaled))
		assert.NoError(t, err, "kubectl scale changes no capability")

		changed := invalid.DeepCopy()
		changed.UID, changed.Generation = "u1", 5
		_, err = r.checkCapabilities(t.Context(), scopeOf(changed))
		assert.Error(t, err, "changed capabilities are checked")

		recreated := a.DeepCopy()
		recreated.UID, recreated.Generation = "u2", 1
		r.checked.Store(key(a), checkedCaps{uid: "u1", hash: "other"})
		_, err = r.checkCapabilities(t.Context(), scopeOf(recreated))
		assert.NoError(t, err)
		last, _ := r.checked.Load(key(a))
		assert.Equal(t, types.UID("u2"), last.(checkedCaps).uid, "a recreated Agent is checked afresh")
	})
}

func key(a *ossav1.Agent) types.NamespacedName {
	return types.NamespacedName{Namespace: a.Namespace, Name: a.Name}
}
