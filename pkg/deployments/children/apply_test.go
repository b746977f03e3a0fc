package children

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestContains(t *testing.T) {
	tests := []struct {
		name       string
		live, want map[string]any
		ok         bool
	}{
		{name: "defaults and foreign fields in live", ok: true,
			live: map[string]any{"spec": map[string]any{"replicas": int64(2), "revisionHistoryLimit": int64(10)}, "status": map[string]any{}},
			want: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"replicas": int64(2)}}},
		{name: "edited value", live: map[string]any{"spec": map[string]any{"replicas": int64(3)}},
			want: map[string]any{"spec": map[string]any{"replicas": int64(2)}}},
		{name: "numbers of different types", ok: true, live: map[string]any{"n": int64(2)}, want: map[string]any{"n": float64(2)}},
		{name: "missing field", live: map[string]any{}, want: map[string]any{"data": map[string]any{"A": "1"}}},
		{name: "empty wanted map matches missing", ok: true, live: map[string]any{}, want: map[string]any{"tls": map[string]any{}}},
		{name: "list element edited", live: map[string]any{"l": []any{map[string]any{"image": "evil", "name": "c"}}},
			want: map[string]any{"l": []any{map[string]any{"image": "good"}}}},
		{name: "list element defaulted", ok: true, live: map[string]any{"l": []any{map[string]any{"port": int64(80), "protocol": "TCP"}}},
			want: map[string]any{"l": []any{map[string]any{"port": int64(80)}}}},
		{name: "extra list element", live: map[string]any{"l": []any{"a", "b"}}, want: map[string]any{"l": []any{"a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.ok, Contains(tt.live, tt.want, true))
		})
	}
}

func TestDeploymentReady(t *testing.T) {
	d := func(gen, observed int64, replicas, ready, updated, total int32) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: gen},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: observed, ReadyReplicas: ready, AvailableReplicas: ready,
				UpdatedReplicas: updated, Replicas: total}}
	}
	assert.True(t, DeploymentReady(d(2, 2, 2, 2, 2, 2)))
	assert.False(t, DeploymentReady(d(3, 2, 2, 2, 2, 2)), "spec change not observed yet")
	assert.False(t, DeploymentReady(d(2, 2, 2, 1, 2, 2)), "a replica not ready")
	assert.False(t, DeploymentReady(d(2, 2, 2, 2, 1, 3)), "rollout in progress")
	assert.True(t, DeploymentReady(d(2, 2, 0, 0, 0, 0)), "scaled to zero")
}
