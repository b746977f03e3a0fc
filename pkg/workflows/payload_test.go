package workflows

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/webhook"
)

func TestNextAttempt(t *testing.T) {
	p := webhook.Policy{MaxAttempts: 5, BaseDelay: 200 * time.Millisecond, MaxDelay: time.Second}
	stored := &v1alpha1.WebhookDelivery{Attempts: 1, LastAttemptTime: new(metav1.NewTime(t0))}
	assert.Equal(t, time.Duration(0), nextAttempt(p, nil, t0))
	// The attempt happened within [t0, t0+1s): wait until t0+1s+200ms.
	assert.Equal(t, 700*time.Millisecond, nextAttempt(p, stored, t0.Add(500*time.Millisecond)))
	assert.Equal(t, time.Duration(0), nextAttempt(p, stored, t0.Add(1200*time.Millisecond)))
	assert.Equal(t, t0, stored.LastAttemptTime.Time, "the stored status is not modified")
}

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
