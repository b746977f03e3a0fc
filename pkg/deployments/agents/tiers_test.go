package agents_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/agents"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testkit"
)

// TestAgentTiers: in a namespace without a max-tier label (so the free
// tier: 2 replicas, 1 CPU, 1Gi, no GPU), an Agent above the tier is refused
// naming each field and limit, an honest one runs with its NetworkPolicy
// and the namespace's quota and limit range, a scale beyond the cap is
// refused, and the namespace's label raises the cap.
func TestAgentTiers(t *testing.T) {
	c := newClient(t)
	ns := newNamespace(t, c)
	mgr := startManager(t, ns)
	free := tiers.Defaults()["free"]

	t.Run("20 replicas of 50 CPUs and a GPU are refused, creating nothing", func(t *testing.T) {
		require.NoError(t, c.Create(t.Context(), testkit.MakeAgent("greedy", ns).Replicas(20).Resources("50", "", true).Obj()))
		got := waitPhase(t, c, ns, "greedy", ossav1.AgentStalled, agents.ReasonTierLimitExceeded)
		stalled := condition(got, "Stalled")
		assert.Contains(t, stalled, `True/TierLimitExceeded: spec.replicas: 20 exceeds tier "free" maxReplicas 2`)
		assert.Contains(t, stalled, `spec.agent.runtime.resources.cpu: 50 exceeds tier "free" max cpu 1`)
		assert.Contains(t, stalled, `spec.agent.runtime.resources.gpu: tier "free" allows no GPU (max nvidia.com/gpu 0)`)
		waitEvent(t, c, ns, "greedy", agents.ReasonTierLimitExceeded, "spec.replicas: 20")
		assertNoDeployment(t, c, ns, "greedy")
		assert.Empty(t, children(t, c, ns, "greedy"))
	})

	t.Run("an honest Agent runs with its NetworkPolicy, quota and limit range", func(t *testing.T) {
		require.NoError(t, c.Create(t.Context(), testkit.MakeAgent("db", ns).Replicas(2).Resources("500m", "256Mi", false).Obj()))
		require.NoError(t, c.Create(t.Context(), testkit.MakeAgent("search", ns).Requires("db", "1.0.0", "").Obj()))
		d := getDeployment(t, c, ns, "db")
		assert.Equal(t, resource.MustParse("500m"), d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU],
			"above the tier's default cpu limit (250m): limited to the request")
		markReady(t, c, ns, "db")
		waitPhase(t, c, ns, "db", ossav1.AgentReady, agents.ReasonReady)
		markReady(t, c, ns, "search")
		waitPhase(t, c, ns, "search", ossav1.AgentReady, agents.ReasonReady)

		var np networkingv1.NetworkPolicy
		require.Eventually(t, func() bool {
			return c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "db"}, &np) == nil && len(np.Spec.Ingress) == 1
		}, wait, 100*time.Millisecond, "NetworkPolicy db admitting its dependent")
		assert.Equal(t, metav1.LabelSelector{MatchLabels: map[string]string{labelkeys.ManagedBy: labelkeys.ManagedByValue,
			labelkeys.Agent: "db"}}, np.Spec.PodSelector)
		assert.Equal(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, np.Spec.PolicyTypes)
		assert.Equal(t, []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{labelkeys.ManagedBy: labelkeys.ManagedByValue},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: labelkeys.Agent, Operator: metav1.LabelSelectorOpIn,
				Values: []string{"search"}}}}}}, np.Spec.Ingress[0].From, "from search's pods in the namespace only")
		var searchNP networkingv1.NetworkPolicy
		require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "search"}, &searchNP))
		assert.Empty(t, searchNP.Spec.Ingress, "no dependents: no ingress")

		var quota corev1.ResourceQuota
		require.Eventually(t, func() bool {
			return c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: render.UserChildName}, &quota) == nil &&
				assert.ObjectsAreEqual([]string{"db", "greedy", "search"}, ownerNames(&quota))
		}, wait, 100*time.Millisecond, "every Agent of the namespace owns the quota, none controls it: %v", quota.OwnerReferences)
		assert.Equal(t, "free", quota.Labels[render.TierLabel])
		assert.True(t, equalLists(free.Quota, quota.Spec.Hard), "hard %v", quota.Spec.Hard)
		var lr corev1.LimitRange
		require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: render.UserChildName}, &lr))
		require.Len(t, lr.Spec.Limits, 1)
		assert.True(t, equalLists(free.Max, lr.Spec.Limits[0].Max), "max %v", lr.Spec.Limits[0].Max)
		assert.True(t, equalLists(free.DefaultLimit, lr.Spec.Limits[0].Default))

		before := reconciles(t)
		mgr.Requests.Reset()
		updateAgent(t, c, ns, "db", func(live *ossav1.Agent) { live.Annotations = map[string]string{"touch": "1"} })
		assertNoWrites(t, mgr, before)
	})

	t.Run("a scale beyond the cap is refused and deletes the children", func(t *testing.T) {
		scale(t, c, ns, "db", 3)
		got := waitPhase(t, c, ns, "db", ossav1.AgentStalled, agents.ReasonTierLimitExceeded)
		assert.Contains(t, condition(got, "Stalled"), `spec.replicas: 3 exceeds tier "free" maxReplicas 2`)
		require.Eventually(t, func() bool { return len(children(t, c, ns, "db")) == 0 }, wait, 100*time.Millisecond,
			"children left: %v", children(t, c, ns, "db"))

		scale(t, c, ns, "db", 2)
		assert.Equal(t, int32(2), *getDeployment(t, c, ns, "db").Spec.Replicas, "back within the cap, it runs again")
		markReady(t, c, ns, "db")
		waitPhase(t, c, ns, "db", ossav1.AgentReady, agents.ReasonReady)
	})

	t.Run("the namespace's max-tier label raises the cap", func(t *testing.T) {
		require.NoError(t, c.Create(t.Context(), testkit.MakeAgent("wide", ns).Replicas(5).Obj()))
		got := waitPhase(t, c, ns, "wide", ossav1.AgentStalled, agents.ReasonTierLimitExceeded)
		assert.Contains(t, condition(got, "Stalled"), `spec.replicas: 5 exceeds tier "free" maxReplicas 2`)

		var live corev1.Namespace
		require.NoError(t, c.Get(t.Context(), client.ObjectKey{Name: ns}, &live))
		live.Labels[labelkeys.MaxTier] = "pro"
		require.NoError(t, c.Update(t.Context(), &live))
		assert.Equal(t, int32(5), *getDeployment(t, c, ns, "wide").Spec.Replicas)
		require.Eventually(t, func() bool {
			var q corev1.ResourceQuota
			return c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: render.UserChildName}, &q) == nil &&
				q.Labels[render.TierLabel] == "pro" && equalLists(tiers.Defaults()["pro"].Quota, q.Spec.Hard)
		}, wait, 100*time.Millisecond, "the quota follows the tier")

		live.Labels[labelkeys.MaxTier] = "gold"
		require.NoError(t, c.Update(t.Context(), &live))
		got = waitPhase(t, c, ns, "wide", ossav1.AgentStalled, agents.ReasonUnknownTier)
		assert.Contains(t, condition(got, "Stalled"), `unknown tier "gold"`)
		assert.Contains(t, condition(got, "Stalled"), "label "+labelkeys.MaxTier+" of namespace "+ns)
	})
}

// TestAgentInUserNamespace: where the UserDeployment controller keeps the
// tier quota and limit range (a user namespace), Agents leave them alone.
func TestAgentInUserNamespace(t *testing.T) {
	c := newClient(t)
	ns := newNamespace(t, c)
	startManager(t, ns)
	pro := tiers.Defaults()["pro"]
	userLabels := render.UserLabels("alice")
	userLabels[render.TierLabel] = "pro"
	theirs := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: render.UserChildName, Labels: userLabels},
		Spec: corev1.ResourceQuotaSpec{Hard: pro.Quota}}
	require.NoError(t, c.Create(t.Context(), theirs))

	require.NoError(t, c.Create(t.Context(), testkit.MakeAgent("chat", ns).Obj()))
	getDeployment(t, c, ns, "chat")
	var lr corev1.LimitRange
	require.Eventually(t, func() bool {
		return c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: render.UserChildName}, &lr) == nil
	}, wait, 100*time.Millisecond, "the limit range the user namespace lacks")
	assert.Never(t, func() bool {
		var q corev1.ResourceQuota
		return c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: render.UserChildName}, &q) != nil ||
			q.ResourceVersion != theirs.ResourceVersion
	}, settle, 200*time.Millisecond, "the user namespace's quota is never written")
	var quotas corev1.ResourceQuotaList
	require.NoError(t, c.List(t.Context(), &quotas, client.InNamespace(ns)))
	assert.Len(t, quotas.Items, 1, "never a second tier quota")
}

// scale sets the Agent's replicas through its scale subresource, as
// kubectl scale does.
func scale(t *testing.T, c client.Client, ns, name string, replicas int32) {
	t.Helper()
	a := getAgent(t, c, ns, name)
	s := &autoscalingv1.Scale{}
	require.NoError(t, c.SubResource("scale").Get(t.Context(), a, s))
	s.Spec.Replicas = replicas
	require.NoError(t, c.SubResource("scale").Update(t.Context(), a, client.WithSubResourceBody(s)))
}

// ownerNames are the names of obj's owners that are not its controller, sorted.
func ownerNames(obj metav1.Object) []string {
	var out []string
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller == nil || !*ref.Controller {
			out = append(out, ref.Name)
		}
	}
	slices.Sort(out)
	return out
}

// equalLists compares resource lists by value (1Gi and 1024Mi alike).
func equalLists(want, got corev1.ResourceList) bool {
	if len(want) != len(got) {
		return false
	}
	for name, q := range want {
		if g, ok := got[name]; !ok || g.Cmp(q) != 0 {
			return false
		}
	}
	return true
}
