package workflows

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func TestPayload(t *testing.T) {
	wf := makeWorkflow("pay").step("a", nil).obj()
	wf.Status = v1alpha1.WorkflowStatus{
		Phase: v1alpha1.WorkflowFailed, Message: "m", StartTime: new(metav1.NewTime(t0)),
		CompletionTime: new(metav1.NewTime(t0.Add(90 * time.Second))), Duration: "1m30s",
		StepStatuses: []v1alpha1.StepStatus{{Name: "a", Phase: v1alpha1.StepFailed, TaskName: "t", Attempts: 2, Message: "x", Output: map[string]string{"k": "v"}}},
	}
	raw, err := payload(wf)
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"Workflow","namespace":"ns","name":"pay","uid":"uid-pay","userId":"u1","phase":"Failed","message":"m",
		"startTime":"2026-11-30T10:00:00Z","completionTime":"2026-11-30T10:01:30Z","duration":"1m30s",
		"steps":[{"name":"a","phase":"Failed","taskName":"t","attempts":2,"output":{"k":"v"},"message":"x"}]}`, string(raw))
	var back Payload
	require.NoError(t, json.Unmarshal(raw, &back))
	assert.Equal(t, "1m30s", back.Duration)
}
