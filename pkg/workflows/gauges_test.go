package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func TestWorkflowStates(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(-d)} }
	wf := func(ns string, phase v1alpha1.WorkflowPhase, steps ...v1alpha1.StepStatus) *v1alpha1.Workflow {
		w := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: ns}}
		w.Status.Phase, w.Status.StepStatuses = phase, steps
		if phase != v1alpha1.WorkflowPending {
			w.Status.StartTime = ago(time.Hour)
		}
		return w
	}
	waiting := func(d time.Duration) v1alpha1.StepStatus {
		return v1alpha1.StepStatus{Phase: v1alpha1.StepWaiting, StartTime: ago(d)}
	}
	running := v1alpha1.StepStatus{Phase: v1alpha1.StepRunning, StartTime: ago(time.Hour)}
	tests := []struct {
		name string
		wfs  []*v1alpha1.Workflow
		want map[string]namespaceState
	}{
		{"none", nil, map[string]namespaceState{}},
		{"not started and finished ones are not running", []*v1alpha1.Workflow{wf("a", v1alpha1.WorkflowPending),
			wf("a", v1alpha1.WorkflowSucceeded), wf("a", v1alpha1.WorkflowFailed, waiting(time.Hour))}, map[string]namespaceState{}},
		{"running and suspended, by namespace", []*v1alpha1.Workflow{wf("a", v1alpha1.WorkflowRunning, running),
			wf("a", v1alpha1.WorkflowSuspended), wf("b", v1alpha1.WorkflowRunning)},
			map[string]namespaceState{"a": {running: 2}, "b": {running: 1}}},
		{"approvals waiting and the oldest wait", []*v1alpha1.Workflow{
			wf("a", v1alpha1.WorkflowRunning, waiting(time.Minute), running), wf("a", v1alpha1.WorkflowRunning, waiting(time.Hour))},
			map[string]namespaceState{"a": {running: 2, approvals: 2, oldest: time.Hour}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, workflowStates(tc.wfs, now))
		})
	}
}
