package localcluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

func TestKwokNode(t *testing.T) {
	n := kwokNode("kwok-node-7")
	assert.Equal(t, "kwok-node-7", n.Name)
	assert.Equal(t, "fake", n.Annotations["kwok.x-k8s.io/node"])
	assert.Equal(t, "kwok-node-7", n.Labels["kubernetes.io/hostname"])
	assert.Equal(t, "linux", n.Labels["kubernetes.io/os"])
	assert.Empty(t, n.Spec.Taints, "every pod must schedule on the node")
	assert.False(t, n.Spec.Unschedulable)
}

func TestNodeUsable(t *testing.T) {
	cond := func(typ corev1.NodeConditionType, st corev1.ConditionStatus) corev1.NodeCondition {
		return corev1.NodeCondition{Type: typ, Status: st}
	}
	ready := []corev1.NodeCondition{cond(corev1.NodeReady, corev1.ConditionTrue)}
	tests := []struct {
		name  string
		conds []corev1.NodeCondition
		spec  corev1.NodeSpec
		want  bool
	}{
		{"no conditions", nil, corev1.NodeSpec{}, false},
		{"ready", []corev1.NodeCondition{cond(corev1.NodeMemoryPressure, corev1.ConditionFalse), cond(corev1.NodeReady, corev1.ConditionTrue)}, corev1.NodeSpec{}, true},
		{"not ready", []corev1.NodeCondition{cond(corev1.NodeReady, corev1.ConditionFalse)}, corev1.NodeSpec{}, false},
		{"unknown", []corev1.NodeCondition{cond(corev1.NodeReady, corev1.ConditionUnknown)}, corev1.NodeSpec{}, false},
		{"ready but still tainted not-ready", ready, corev1.NodeSpec{Taints: []corev1.Taint{{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule}}}, false},
		{"ready but cordoned", ready, corev1.NodeSpec{Unschedulable: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, nodeUsable(&corev1.Node{Spec: tt.spec, Status: corev1.NodeStatus{Conditions: tt.conds}}))
		})
	}
}
