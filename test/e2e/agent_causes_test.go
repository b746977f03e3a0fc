//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/podcause"
	"opsnorth.io/scheduler/pkg/testkit"
)

// agentSeesWithin is how soon an Agent must name why its pods cannot
// start: the pod's creation, the kubelet's first pull failure and a few
// watch round trips, nowhere near the Deployment's progress deadline.
const agentSeesWithin = 15 * time.Second

// TestAgentReportsWhyItCannotStart: an Agent whose image cannot be pulled
// (kwok fails images on unreachable.invalid as the kubelet does) stays
// Progressing with Ready=False naming the pull failure within seconds, and
// becomes Ready by itself once its image is fixed.
func TestAgentReportsWhyItCannotStart(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	ns := newNamespace(t, c)
	const name = "unpullable"
	a := testkit.MakeAgent(name, ns).Runtime(ossav1.RuntimeK8s).Obj()
	a.Spec.Agent.Runtime.Image = "unreachable.invalid/agent:1"
	created := time.Now()
	_, err := cs.OssaV1().Agents(ns).Create(t.Context(), a, metav1.CreateOptions{})
	require.NoError(t, err)

	got, ready := waitAgent(t, ns, name, func(_ *ossav1.Agent, ready *metav1.Condition) bool {
		return ready != nil && ready.Reason == podcause.ReasonImagePullFailed
	})
	took := time.Since(created)
	t.Logf("%s: %s after %s: %s", name, ready.Reason, took.Round(time.Millisecond), ready.Message)
	assert.Less(t, took, agentSeesWithin, "seen within seconds of the Agent being created")
	assert.Equal(t, metav1.ConditionFalse, ready.Status)
	assert.Equal(t, ossav1.AgentProgressing, got.Status.Phase)
	assert.Contains(t, ready.Message, "cannot pull the image of container agent")
	assert.Contains(t, ready.Message, "unreachable.invalid")

	healed := time.Now()
	_, err = cs.OssaV1().Agents(ns).Patch(t.Context(), name, types.MergePatchType,
		fmt.Appendf(nil, `{"spec":{"agent":{"runtime":{"image":%q}}}}`, "ghcr.io/acme/agent:1"), metav1.PatchOptions{})
	require.NoError(t, err)
	waitAgent(t, ns, name, func(a *ossav1.Agent, ready *metav1.Condition) bool {
		return a.Status.Phase == ossav1.AgentReady && ready != nil && ready.Status == metav1.ConditionTrue
	})
	t.Logf("%s: Ready %s after the image was fixed", name, time.Since(healed).Round(time.Millisecond))
}

// waitAgent waits until done holds for the Agent, at its current
// generation, and its Ready condition, and returns both.
func waitAgent(t *testing.T, ns, name string, done func(*ossav1.Agent, *metav1.Condition) bool) (*ossav1.Agent, *metav1.Condition) {
	t.Helper()
	cs := scheduler(t, requireCluster(t))
	var got *ossav1.Agent
	var ready *metav1.Condition
	var last string
	if !assert.Eventually(t, func() bool {
		a, err := cs.OssaV1().Agents(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		got, ready = a, meta.FindStatusCondition(a.Status.Conditions, "Ready")
		if ready != nil {
			last = string(a.Status.Phase) + " " + ready.Reason + ": " + ready.Message
		}
		return a.Status.ObservedGeneration == a.Generation && done(a, ready)
	}, timeout, tick) {
		t.Fatalf("Agent %s/%s; last seen %s", ns, name, last)
	}
	return got, ready
}
