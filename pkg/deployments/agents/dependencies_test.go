package agents_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/agents"
	"opsnorth.io/scheduler/pkg/deployments/agents/resolve"
	"opsnorth.io/scheduler/pkg/testkit"
)

// dependencyReady is the DependenciesReady condition of a.
func dependencyReady(a *ossav1.Agent) *string {
	c := meta.FindStatusCondition(a.Status.Conditions, ossav1.ConditionDependenciesReady)
	if c == nil {
		return nil
	}
	s := string(c.Status) + "/" + c.Reason + ": " + c.Message
	return &s
}

func TestAgentDependencies(t *testing.T) {
	c := newClient(t)
	ns := newNamespace(t, c)
	startManager(t, ns)

	require.NoError(t, c.Create(t.Context(), testkit.MakeAgent("search", ns).Requires("db", "1.0.0", "2.0.0").
		Uses("cache", "in-memory").Obj()))

	t.Run("waits for a missing dependency, creating nothing", func(t *testing.T) {
		got := waitPhase(t, c, ns, "search", ossav1.AgentWaiting, agents.ReasonWaitingForDependencies)
		assert.Contains(t, *dependencyReady(got), "False/"+resolve.ReasonDependencyMissing)
		assert.Contains(t, *dependencyReady(got), `"db"`)
		assert.Contains(t, condition(got, "Ready"), `"db"`, "Ready names what it waits for")
		assert.Contains(t, condition(got, "Reconciling"), "True/WaitingForDependencies")
		assert.Empty(t, got.Status.Endpoint)
		require.Len(t, got.Status.Dependencies, 2)
		assert.Equal(t, "db", got.Status.Dependencies[0].AgentID)
		assert.False(t, got.Status.Dependencies[0].Ready)
		assert.Equal(t, "cache", got.Status.Dependencies[1].AgentID)
		assert.True(t, got.Status.Dependencies[1].Optional)
		assertNoDeployment(t, c, ns, "search")
		assert.Empty(t, children(t, c, ns, "search"))
		waitEvent(t, c, ns, "search", "Waiting", `"db"`)
	})

	t.Run("waits while the dependency is not ready", func(t *testing.T) {
		require.NoError(t, c.Create(t.Context(), testkit.MakeAgent("db", ns).Version("1.2.0").Obj()))
		waitPhase(t, c, ns, "db", ossav1.AgentProgressing, "")
		got := waitAgent(t, c, ns, "search", func(a *ossav1.Agent) bool {
			d := dependencyReady(a)
			return d != nil && strings.Contains(*d, resolve.ReasonDependencyNotReady)
		}, "DependencyNotReady")
		assert.Equal(t, ossav1.AgentWaiting, got.Status.Phase)
		assert.Equal(t, "db", got.Status.Dependencies[0].Agent)
		assert.Equal(t, "1.2.0", got.Status.Dependencies[0].Version)
		assertNoDeployment(t, c, ns, "search")
	})

	t.Run("starts within seconds of its dependency being ready", func(t *testing.T) {
		markReady(t, c, ns, "db")
		waitPhase(t, c, ns, "db", ossav1.AgentReady, "")
		start := time.Now()
		require.Eventually(t, func() bool {
			return c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "search"}, &appsv1.Deployment{}) == nil
		}, 5*time.Second, 50*time.Millisecond, "search's Deployment")
		t.Logf("search's Deployment %s after db was Ready", time.Since(start).Round(time.Millisecond))
		markReady(t, c, ns, "search")
		got := waitPhase(t, c, ns, "search", ossav1.AgentReady, agents.ReasonReady)
		assert.Contains(t, *dependencyReady(got), "True/"+resolve.ReasonResolved)
		assert.True(t, got.Status.Dependencies[0].Ready)
		assert.Equal(t, "True/Ready: 1/1 replicas ready", condition(got, "Ready"))
	})

	t.Run("a running dependent stays when its dependency goes unready", func(t *testing.T) {
		setDeploymentStatus(t, c, ns, "db", noneReady)
		waitPhase(t, c, ns, "db", ossav1.AgentProgressing, "")
		got := waitAgent(t, c, ns, "search", func(a *ossav1.Agent) bool {
			d := dependencyReady(a)
			return d != nil && strings.HasPrefix(*d, "False/"+resolve.ReasonDependencyNotReady)
		}, "DependenciesReady False")
		assert.Equal(t, ossav1.AgentReady, got.Status.Phase, "it still serves")
		assert.Contains(t, condition(got, "Ready"), "required dependencies not ready")
		assert.Contains(t, condition(got, "Ready"), `"db"`)
		assert.Never(t, func() bool {
			var d appsv1.Deployment
			err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "search"}, &d)
			return err != nil || *d.Spec.Replicas != 1
		}, settle/2, 200*time.Millisecond, "not scaled down, not deleted")

		markReady(t, c, ns, "db")
		waitAgent(t, c, ns, "search", func(a *ossav1.Agent) bool {
			d := dependencyReady(a)
			return d != nil && strings.HasPrefix(*d, "True/") && condition(a, "Ready") == "True/Ready: 1/1 replicas ready"
		}, "recovered")
	})

	t.Run("a version out of range", func(t *testing.T) {
		require.NoError(t, c.Create(t.Context(), testkit.MakeAgent("report", ns).Requires("db", "2.0.0", "").Obj()))
		got := waitPhase(t, c, ns, "report", ossav1.AgentWaiting, agents.ReasonWaitingForDependencies)
		assert.Contains(t, *dependencyReady(got), "False/"+resolve.ReasonDependencyVersionOutOfRange)
		assert.Contains(t, *dependencyReady(got), "1.2.0")
		assertNoDeployment(t, c, ns, "report")
	})

	t.Run("a cycle stalls", func(t *testing.T) {
		require.NoError(t, c.Create(t.Context(), testkit.MakeAgent("ping", ns).Requires("pong", "1.0.0", "").Obj()))
		require.NoError(t, c.Create(t.Context(), testkit.MakeAgent("pong", ns).Requires("ping", "1.0.0", "").Obj()))
		for _, name := range []string{"ping", "pong"} {
			got := waitPhase(t, c, ns, name, ossav1.AgentStalled, agents.ReasonDependencyCycle)
			assert.Contains(t, condition(got, "Stalled"), "True/DependencyCycle")
			assert.Contains(t, condition(got, "Stalled"), "ping")
			assert.Contains(t, condition(got, "Stalled"), "pong")
			assert.Contains(t, *dependencyReady(got), "False/"+resolve.ReasonDependencyCycle)
			assert.Empty(t, condition(got, "Reconciling"))
			waitEvent(t, c, ns, name, agents.ReasonDependencyCycle, "cycle")
		}
		assert.True(t, apierrors.IsNotFound(c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "ping"}, &appsv1.Deployment{})))
	})
}
