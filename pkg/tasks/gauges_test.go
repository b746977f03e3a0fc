package tasks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func TestCountActive(t *testing.T) {
	task := func(ns string, phase v1alpha1.TaskPhase) *v1alpha1.AgentTask {
		return &v1alpha1.AgentTask{ObjectMeta: metav1.ObjectMeta{Namespace: ns}, Status: v1alpha1.AgentTaskStatus{Phase: phase}}
	}
	tests := []struct {
		name  string
		tasks []*v1alpha1.AgentTask
		want  map[activeKey]int
	}{
		{"none", nil, map[activeKey]int{}},
		{"a new task is pending", []*v1alpha1.AgentTask{task("a", "")}, map[activeKey]int{{"a", "Pending"}: 1}},
		{"by namespace and phase", []*v1alpha1.AgentTask{task("a", v1alpha1.TaskRunning), task("a", v1alpha1.TaskRunning),
			task("b", v1alpha1.TaskRunning), task("a", v1alpha1.TaskPending)},
			map[activeKey]int{{"a", "Running"}: 2, {"b", "Running"}: 1, {"a", "Pending"}: 1}},
		{"terminal tasks are not active", []*v1alpha1.AgentTask{task("a", v1alpha1.TaskSucceeded),
			task("a", v1alpha1.TaskFailed), task("a", v1alpha1.TaskTimeout)}, map[activeKey]int{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, countActive(tc.tasks))
		})
	}
}
