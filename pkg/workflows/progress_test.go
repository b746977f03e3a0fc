package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func TestProgress(t *testing.T) {
	step := func(phase v1alpha1.StepPhase, reason string) v1alpha1.StepStatus {
		return v1alpha1.StepStatus{Name: "s", Phase: phase, Reason: reason}
	}
	tests := []struct {
		name  string
		steps []v1alpha1.StepStatus
		want  string
	}{
		{name: "no steps recorded", want: "0/0"},
		{name: "none started", steps: []v1alpha1.StepStatus{step(v1alpha1.StepPending, ""), step(v1alpha1.StepPending, "")}, want: "0/2"},
		{name: "running, retrying and waiting are not done", steps: []v1alpha1.StepStatus{
			step(v1alpha1.StepSucceeded, ""), step(v1alpha1.StepRunning, ""), step(v1alpha1.StepRetrying, "StepFailed"),
			step(v1alpha1.StepWaiting, ""), step(v1alpha1.StepPending, ""),
		}, want: "1/5"},
		{name: "a failed step is not done", steps: []v1alpha1.StepStatus{
			step(v1alpha1.StepSucceeded, ""), step(v1alpha1.StepSucceeded, ""), step(v1alpha1.StepFailed, "StepFailed"),
		}, want: "2/3"},
		{name: "an approval skipped at its timeout is done", steps: []v1alpha1.StepStatus{
			step(v1alpha1.StepSucceeded, ""), step(v1alpha1.StepSkipped, ReasonApprovalTimeout), step(v1alpha1.StepPending, ""),
		}, want: "2/3"},
		{name: "a step skipped because the workflow ended is not", steps: []v1alpha1.StepStatus{
			step(v1alpha1.StepFailed, "StepFailed"), step(v1alpha1.StepSkipped, ""),
		}, want: "0/2"},
		{name: "all done", steps: []v1alpha1.StepStatus{
			step(v1alpha1.StepSucceeded, ""), step(v1alpha1.StepSucceeded, ""), step(v1alpha1.StepSucceeded, ""),
		}, want: "3/3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, progress(tt.steps))
		})
	}
}

// TestDecideSetsProgress: every decided status carries the progress of its
// steps, an invalid workflow's too.
func TestDecideSetsProgress(t *testing.T) {
	wf := makeWorkflow("dia").step("a", nil).step("b", nil, "a").step("c", nil, "a").step("d", nil, "b", "c").obj()
	first := decide(observe(wf, t0))
	assert.Equal(t, "0/4", first.status.Progress)

	wf.Status = *first.status.DeepCopy()
	mid := decide(observe(wf, t0.Add(time.Minute),
		task(wf, "a", 0, v1alpha1.TaskSucceeded, nil), task(wf, "b", 0, v1alpha1.TaskSucceeded, nil), task(wf, "c", 0, v1alpha1.TaskRunning, nil)))
	assert.Equal(t, v1alpha1.WorkflowRunning, mid.status.Phase)
	assert.Equal(t, "2/4", mid.status.Progress)

	invalid := makeWorkflow("cycle").step("a", nil, "b").step("b", nil, "a").obj()
	failed := decide(observe(invalid, t0))
	assert.Equal(t, v1alpha1.WorkflowFailed, failed.status.Phase)
	assert.Equal(t, "0/2", failed.status.Progress)
}
