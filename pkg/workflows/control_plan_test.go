package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func TestDeadlineLeavesOutSuspension(t *testing.T) {
	at := func(s int) *metav1.Time { return new(metav1.NewTime(t0.Add(time.Duration(s) * time.Second))) }
	tests := []struct {
		name          string
		counts        bool
		suspendedSecs int64
		suspendTime   *metav1.Time
		history       []v1alpha1.RetryRecord
		now           time.Time
		want          time.Time
	}{
		{name: "never suspended", now: t0, want: t0.Add(61 * time.Second)},
		{name: "suspended before", suspendedSecs: 30, now: t0, want: t0.Add(91 * time.Second)},
		{name: "suspended now", suspendedSecs: 30, suspendTime: at(10), now: t0.Add(50 * time.Second), want: t0.Add(131 * time.Second)},
		{name: "counted when asked", counts: true, suspendedSecs: 30, suspendTime: at(10), now: t0.Add(50 * time.Second), want: t0.Add(61 * time.Second)},
		{name: "from the last retry", history: []v1alpha1.RetryRecord{{Time: *at(100)}, {Time: *at(500)}}, now: t0, want: t0.Add(561 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wf := makeWorkflow("wf").step("a", nil).timeout(60).started().obj()
			wf.Spec.TimeoutCountsSuspension = tt.counts
			st := &wf.Status
			st.SuspendedSeconds, st.SuspendTime, st.RetryHistory = tt.suspendedSecs, tt.suspendTime, tt.history
			assert.Equal(t, tt.want, deadline(wf, st, tt.now))
		})
	}
}

func TestSuspendedStartsNothing(t *testing.T) {
	wf := makeWorkflow("wf").step("a", nil).step("b", nil).started().obj()
	wf.Spec.Suspend = true
	p := decide(observe(wf, t0.Add(5*time.Second), task(wf, "a", 0, v1alpha1.TaskSucceeded, map[string]string{"k": "v"})))
	assert.Empty(t, p.starts)
	assert.Equal(t, v1alpha1.WorkflowSuspended, p.status.Phase)
	assert.Equal(t, ReasonSuspended, p.reason)
	assert.Equal(t, t0.Add(5*time.Second), p.status.SuspendTime.Time)
	assertSummary(t, p.status)

	wf.Status = p.status
	wf.Spec.Suspend = false
	p = decide(observe(wf, t0.Add(25*time.Second), task(wf, "a", 0, v1alpha1.TaskSucceeded, map[string]string{"k": "v"})))
	require.Len(t, p.starts, 1)
	assert.Equal(t, 1, p.starts[0].step)
	assert.Equal(t, int64(20), p.status.SuspendedSeconds)
	assert.Nil(t, p.status.SuspendTime)
	assert.Nil(t, meta.FindStatusCondition(p.status.Conditions, ConditionSuspended))
}

func TestApprovalDecisions(t *testing.T) {
	gated := func(approvals ...v1alpha1.Approval) *v1alpha1.Workflow {
		wf := makeWorkflow("wf").step("a", nil).started().obj()
		wf.Spec.Steps = append(wf.Spec.Steps, v1alpha1.WorkflowStep{Name: "gate", Approval: &v1alpha1.ApprovalGate{
			Message: "ok ${steps.a.output.k}?", TimeoutSeconds: new(int64(60)), OnTimeout: v1alpha1.ApprovalTimeoutSkip}})
		wf.Spec.Approvals = approvals
		return wf
	}
	a := func(wf *v1alpha1.Workflow) *v1alpha1.AgentTask {
		return task(wf, "a", 0, v1alpha1.TaskSucceeded, map[string]string{"k": "v"})
	}
	wf := gated()
	p := decide(observe(wf, t0.Add(20*time.Second), a(wf)))
	gate := p.status.StepStatuses[1]
	assert.Equal(t, v1alpha1.StepWaiting, gate.Phase)
	assert.Equal(t, "ok v?", gate.Message)
	assert.Empty(t, p.starts, "an approval step creates no task")
	assert.Equal(t, 61*time.Second, p.requeue, "wakes at the approval timeout")

	tests := []struct {
		name      string
		approvals []v1alpha1.Approval
		now       time.Duration
		phase     v1alpha1.StepPhase
		output    map[string]string
	}{
		{name: "still waiting", now: 30 * time.Second, phase: v1alpha1.StepWaiting},
		{name: "approved", approvals: []v1alpha1.Approval{{Step: "gate", By: "ann", Comment: "go"}}, now: 30 * time.Second,
			phase: v1alpha1.StepSucceeded, output: map[string]string{"decision": "approved", "approver": "ann", "comment": "go", "approvedAt": "2026-11-30T10:00:30Z"}},
		{name: "decision of an earlier run", approvals: []v1alpha1.Approval{{Step: "gate", By: "ann"}}, now: 30 * time.Second, phase: v1alpha1.StepWaiting},
		{name: "rejected", approvals: []v1alpha1.Approval{{Step: "gate", By: "ann", Decision: v1alpha1.DecisionReject}}, now: 30 * time.Second, phase: v1alpha1.StepFailed},
		{name: "skipped at the timeout", now: 81 * time.Second, phase: v1alpha1.StepSkipped, output: map[string]string{"decision": "skipped"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wf := gated(tt.approvals...)
			wf.Status = *p.status.DeepCopy()
			if tt.name == "decision of an earlier run" {
				wf.Status.Retries = 1
			}
			next := decide(observe(wf, t0.Add(tt.now), a(wf)))
			assert.Equal(t, tt.phase, next.status.StepStatuses[1].Phase)
			assert.Equal(t, tt.output, next.status.StepStatuses[1].Output)
		})
	}
}

func TestRetryStatusKeepsSucceeded(t *testing.T) {
	wf := makeWorkflow("wf").step("a", nil).step("b", nil).step("c", nil).started().obj()
	wf.Spec.Retry = 1
	failed := decide(observe(wf, t0.Add(20*time.Second), task(wf, "a", 0, v1alpha1.TaskSucceeded, map[string]string{"k": "v"}),
		task(wf, "b", 0, v1alpha1.TaskFailed, nil)))
	require.Equal(t, v1alpha1.WorkflowFailed, failed.status.Phase)
	assertSummary(t, failed.status)
	wf.Status = failed.status
	require.True(t, retryRequested(wf))

	st := retryStatus(wf, t0.Add(30*time.Second))
	assert.Equal(t, v1alpha1.WorkflowRunning, st.Phase)
	assertSummary(t, st)
	assert.Equal(t, int32(1), st.Retries)
	assert.Equal(t, []v1alpha1.RetryRecord{{Time: metav1.NewTime(t0.Add(30 * time.Second)), Reason: ReasonStepFailed,
		Message: failed.status.Message, Steps: []string{"b", "c"}}}, st.RetryHistory)
	assert.Equal(t, failed.status.StepStatuses[0], st.StepStatuses[0], "a succeeded step is kept as it was")
	assert.Equal(t, v1alpha1.StepStatus{Name: "b", Phase: v1alpha1.StepPending, Attempts: 1, FirstAttempt: 1}, st.StepStatuses[1])
	assert.Nil(t, st.CompletionTime)

	wf.Status = st
	p := decide(observe(wf, t0.Add(31*time.Second), task(wf, "a", 0, v1alpha1.TaskSucceeded, map[string]string{"k": "v"}),
		task(wf, "b", 0, v1alpha1.TaskFailed, nil)))
	require.Len(t, p.starts, 1)
	assert.Equal(t, start{step: 1, attempt: 1}, p.starts[0], "the failed step runs again as its next attempt")
	assert.Equal(t, v1alpha1.WorkflowRunning, p.status.Phase, "the failed attempt of the earlier run does not count")
}
