package agents

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testkit"
)

func TestTierObjects(t *testing.T) {
	free := tiers.Defaults()["free"]
	gone := testkit.MakeAgent("gone", "team").WithUID("u-0").Obj()
	gone.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	peers := []*ossav1.Agent{testkit.MakeAgent("search", "team").WithUID("u-2").Obj(), gone,
		testkit.MakeAgent("db", "team").WithUID("u-1").Obj()}
	cs := TierObjects("team", "free", free, peers)
	require.Len(t, cs, 2)
	owners := []metav1.OwnerReference{{APIVersion: "ossa.ai/v1", Kind: "Agent", Name: "db", UID: "u-1"},
		{APIVersion: "ossa.ai/v1", Kind: "Agent", Name: "search", UID: "u-2"}}
	wantLabels := map[string]string{labelkeys.ManagedBy: labelkeys.ManagedByValue, labelkeys.PartOf: labelkeys.PartOfValue,
		labelkeys.Component: "agent", render.TierLabel: "free"}

	q := typed[corev1.ResourceQuota](t, cs[0])
	assert.Equal(t, render.UserChildName, q.Name, "the user namespaces' name: never two")
	assert.Equal(t, "team", q.Namespace)
	assert.Equal(t, wantLabels, q.Labels)
	assert.NotContains(t, q.Labels, labelkeys.User, "the UserDeployment controller neither caches nor releases it")
	assert.Equal(t, owners, q.OwnerReferences, "every Agent owns it, none controls it; sorted by uid")
	assert.Equal(t, free.Quota, q.Spec.Hard)

	lr := typed[corev1.LimitRange](t, cs[1])
	assert.Equal(t, render.UserChildName, lr.Name)
	assert.Equal(t, wantLabels, lr.Labels)
	assert.Equal(t, owners, lr.OwnerReferences)
	assert.Equal(t, []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Max: free.Max, Default: free.DefaultLimit,
		DefaultRequest: free.DefaultRequest}}, lr.Spec.Limits)

	user := typed[corev1.ResourceQuota](t, render.Quota("user-alice", "alice", "free", free))
	assert.Equal(t, q.Name, user.Name, "the same builder and name as a user namespace's")
	assert.Empty(t, user.OwnerReferences)
	assert.Equal(t, "alice", user.Labels[labelkeys.User])
}

func TestTierCaches(t *testing.T) {
	var o metav1.ListOptions
	selectTierObjects(&o)
	assert.Equal(t, "app.kubernetes.io/managed-by=opsnorth-scheduler", o.LabelSelector, "a user namespace's too")
	assert.Equal(t, "metadata.name=opsnorth-tier", o.FieldSelector)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", ResourceVersion: "7",
		Labels: map[string]string{labelkeys.MaxTier: "pro", labelkeys.Tenant: "alice"}, Annotations: map[string]string{"a": "b"}}}
	kept, err := keepMaxTier(ns)
	require.NoError(t, err)
	assert.Equal(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", ResourceVersion: "7",
		Labels: map[string]string{labelkeys.MaxTier: "pro"}}}, kept)
	plain, err := keepMaxTier(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x"}})
	require.NoError(t, err)
	assert.Nil(t, plain.(*corev1.Namespace).Labels)

	relabelled := ns.DeepCopy()
	relabelled.Labels[labelkeys.MaxTier] = "free"
	assert.True(t, maxTierNews(ns, relabelled))
	other := ns.DeepCopy()
	other.Labels["unrelated"] = "x"
	assert.False(t, maxTierNews(ns, other))
	assert.False(t, maxTierNews(nil, ns), "a new namespace has no Agents yet")

	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: render.UserChildName, ResourceVersion: "1",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec:   corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"pods": resource.MustParse("10")}},
		Status: corev1.ResourceQuotaStatus{Used: corev1.ResourceList{"pods": resource.MustParse("1")}}}
	trimmed, err := trimTierObject(quota.DeepCopy())
	require.NoError(t, err)
	old := trimmed.(*corev1.ResourceQuota)
	assert.Empty(t, old.ManagedFields)
	assert.Empty(t, old.Status.Used, "usage changes with every pod")
	used := quota.DeepCopy()
	used.ResourceVersion, used.Status.Used["pods"] = "2", resource.MustParse("2")
	cur, err := trimTierObject(used)
	require.NoError(t, err)
	assert.False(t, tierObjectNews(old, cur.(*corev1.ResourceQuota)), "a change of usage only")
	changed := old.DeepCopy()
	changed.Labels = map[string]string{labelkeys.User: "alice"}
	assert.True(t, tierObjectNews(old, changed))
	assert.True(t, tierObjectNews(nil, old))
	assert.True(t, tierObjectNews(old, nil))
}
