package agents

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/podcause"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testkit"
)

func TestMapAgentRequeuesDependents(t *testing.T) {
	inf := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{}, &ossav1.Agent{}, 0,
		toolscache.Indexers{indexDependsOn: dependsOn, indexAgentID: agentID})
	db := testkit.MakeAgent("db", "team").WithUID("db").Obj()
	search := testkit.MakeAgent("search", "team").WithUID("search").Requires("db", "1.0.0", "").Obj()
	for _, a := range []*ossav1.Agent{
		db, search,
		testkit.MakeAgent("chat", "team").WithUID("chat").Uses("db", "cache").Obj(),
		testkit.MakeAgent("other", "elsewhere").WithUID("other").Requires("db", "1.0.0", "").Obj(),
		testkit.MakeAgent("plain", "team").WithUID("plain").Obj(),
	} {
		require.NoError(t, inf.GetIndexer().Add(a))
	}
	r := &Reconciler{agentInformers: []toolscache.SharedIndexInformer{inf}}
	got := r.mapAgent(t.Context(), db)
	assert.ElementsMatch(t, []reconcile.Request{request("team", "db"), request("team", "search"), request("team", "chat")}, got,
		"the agent itself and its namespace's dependents, required or optional")
	assert.ElementsMatch(t, []reconcile.Request{request("team", "search"), request("team", "db")}, r.mapAgent(t.Context(), search),
		"and the agents it depends on: their NetworkPolicy admits it")
}

func TestMapChild(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "search-capabilities",
		Labels: map[string]string{labelkeys.Agent: "search"}}}
	assert.Equal(t, []reconcile.Request{request("team", "search")}, mapChild(t.Context(), cm))
	assert.Empty(t, mapChild(t.Context(), &corev1.ConfigMap{}))
}

func TestForeignOwner(t *testing.T) {
	a := testkit.MakeAgent("search", "team").WithUID("u-1").Obj()
	ours, err := CapabilitiesConfigMap(a, "[]").Unstructured()
	require.NoError(t, err)
	assert.Empty(t, foreignOwner(ours, a))

	earlier := testkit.MakeAgent("search", "team").WithUID("u-0").Obj()
	old, err := CapabilitiesConfigMap(earlier, "[]").Unstructured()
	require.NoError(t, err)
	assert.Contains(t, foreignOwner(old, a), "an earlier Agent search")

	plain := old.DeepCopy()
	plain.SetOwnerReferences(nil)
	assert.Contains(t, foreignOwner(plain, a), "not controlled by Agent search")
}

// TestPodCache: the Agents' pods, as their Deployment's template labels
// them, are selected by the pod cache, indexed by their Agent, mapped to it
// and enqueue it only when their cause changed.
func TestPodCache(t *testing.T) {
	a := testkit.MakeAgent("search", "team").Obj()
	d, err := Deployment(a, "[]", tiers.Tier{}).Unstructured()
	require.NoError(t, err)
	tmpl, _, err := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
	require.NoError(t, err)
	assert.True(t, ChildSelector().Matches(labels.Set(tmpl)), "the pod cache selects the Agent's pods: %v", tmpl)

	var o metav1.ListOptions
	selectPods(&o)
	assert.Equal(t, ChildSelector().String(), o.LabelSelector)
	assert.Equal(t, podcause.Unfinished, o.FieldSelector)

	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "search-5d9c7-aaaaa", Labels: tmpl},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	pulling := pending.DeepCopy()
	pulling.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "no such host"}}}}
	backingOff := pulling.DeepCopy()
	backingOff.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff",
		Message: `Back-off pulling image "x": ErrImagePull: no such host`}

	trimmed, err := podKind.Transform(pulling.DeepCopy())
	require.NoError(t, err)
	assert.Equal(t, map[string]string{labelkeys.Agent: "search"}, trimmed.(*corev1.Pod).Labels)
	assert.Equal(t, []string{"team/search"}, must(podAgentKey(trimmed)))
	assert.Empty(t, must(podAgentKey(&corev1.Pod{})))

	assert.Equal(t, []reconcile.Request{request("team", "search")}, mapPod(trimmed.(*corev1.Pod)))
	assert.Empty(t, mapPod(&corev1.Pod{}))

	assert.False(t, podNews(nil, pending), "created without a cause")
	assert.True(t, podNews(pending, pulling), "the cause appears")
	assert.False(t, podNews(pulling, backingOff), "the kubelet's pull states alternate")
	assert.True(t, podNews(backingOff, nil), "deleted with a cause")

	r := &Reconciler{pods: toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, podKind.Indexers)}
	for _, name := range []string{"search-b", "search-a"} {
		p := pulling.DeepCopy()
		p.Name = name
		require.NoError(t, r.pods.Add(podcause.Trim(p, labelkeys.Agent)))
	}
	other := pulling.DeepCopy()
	other.Name, other.Labels = "chat-a", map[string]string{labelkeys.Agent: "chat"}
	require.NoError(t, r.pods.Add(other))
	pods, err := r.podsOf(a)
	require.NoError(t, err)
	require.Len(t, pods, 2)
	assert.Equal(t, "search-a", pods[0].Name, "sorted by name")
	none, err := (&Reconciler{}).podsOf(a)
	require.NoError(t, err)
	assert.Empty(t, none, "no pod cache, no pods")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
