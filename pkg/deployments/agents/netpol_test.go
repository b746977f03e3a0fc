package agents

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testkit"
)

func TestNetworkPolicy(t *testing.T) {
	a := testkit.MakeAgent("db", "team").WithUID("u-1").Obj()
	tests := []struct {
		name       string
		dependents []string
		ingress    []networkingv1.NetworkPolicyIngressRule
	}{
		{name: "no dependents: no ingress at all"},
		{name: "from the dependents' pods in the namespace", dependents: []string{"chat", "search"},
			ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{labelkeys.ManagedBy: labelkeys.ManagedByValue},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: labelkeys.Agent, Operator: metav1.LabelSelectorOpIn,
					Values: []string{"chat", "search"}}},
			}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NetworkPolicy(a, tt.dependents)
			np := typed[networkingv1.NetworkPolicy](t, c)
			assert.Equal(t, "db", np.Name)
			assert.Equal(t, "team", np.Namespace)
			assert.Equal(t, Labels(a), np.Labels)
			assert.Equal(t, []metav1.OwnerReference{*OwnerReference(a)}, np.OwnerReferences)
			assert.Equal(t, metav1.LabelSelector{MatchLabels: SelectorLabels(a)}, np.Spec.PodSelector)
			assert.Equal(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, np.Spec.PolicyTypes)
			assert.Equal(t, tt.ingress, np.Spec.Ingress)
			assert.Empty(t, np.Spec.Egress)
			for _, rule := range np.Spec.Ingress {
				for _, peer := range rule.From {
					assert.Nil(t, peer.NamespaceSelector, "its own namespace only")
					assert.Nil(t, peer.IPBlock)
				}
			}
		})
	}
}

func TestDependents(t *testing.T) {
	db := testkit.MakeAgent("db", "team").Obj()
	gone := testkit.MakeAgent("gone", "team").Requires("db", "1.0.0", "").Obj()
	gone.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	peers := []*ossav1.Agent{
		db,
		testkit.MakeAgent("search", "team").Requires("db", "1.0.0", "").Obj(),
		testkit.MakeAgent("chat", "team").Uses("db", "cache").Requires("db", "1.0.0", "").Obj(),
		testkit.MakeAgent("other", "elsewhere").Requires("db", "1.0.0", "").Obj(),
		testkit.MakeAgent("plain", "team").Requires("cache", "1.0.0", "").Obj(),
		gone,
	}
	assert.Equal(t, []string{"chat", "search"}, Dependents(db, peers),
		"required or optional, once each, sorted; not other namespaces' nor deleted ones")
	assert.Empty(t, Dependents(testkit.MakeAgent("plain", "team").Obj(), peers))
	self := testkit.MakeAgent("loop", "team").Requires("loop", "1.0.0", "").Obj()
	assert.Empty(t, Dependents(self, []*ossav1.Agent{self}), "never its own pods")
}
