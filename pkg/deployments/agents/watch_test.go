package agents

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testkit"
)

func TestMapAgentRequeuesDependents(t *testing.T) {
	inf := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{}, &ossav1.Agent{}, 0, toolscache.Indexers{indexDependsOn: dependsOn})
	db := testkit.MakeAgent("db", "team").WithUID("db").Obj()
	for _, a := range []*ossav1.Agent{
		db,
		testkit.MakeAgent("search", "team").WithUID("search").Requires("db", "1.0.0", "").Obj(),
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
