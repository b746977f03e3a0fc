package workflows_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testkit"
	"opsnorth.io/scheduler/pkg/workflows"
)

// control changes the workflow's spec as a person (or kubectl opsnorth) does.
func (k *cluster) control(name string, mutate func(*v1alpha1.WorkflowSpec)) {
	k.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		wf := k.workflow(name)
		mutate(&wf.Spec)
		_, err := k.cs.SchedulerV1alpha1().Workflows(k.ns).Update(context.Background(), wf, metav1.UpdateOptions{})
		return err
	})
	require.NoError(k.t, err)
}

// waitStep waits until step of workflow name is in phase and returns the workflow.
func (k *cluster) waitStep(name, step string, phase v1alpha1.StepPhase) *v1alpha1.Workflow {
	k.t.Helper()
	return testkit.WaitFor(k.t, wait, func() *v1alpha1.Workflow { return k.workflow(name) },
		func(wf *v1alpha1.Workflow) bool { s := stepStatus(wf, step); return s != nil && s.Phase == phase },
		"step %s of workflow %s never reached %s", step, name, phase)
}

func stepStatus(wf *v1alpha1.Workflow, step string) *v1alpha1.StepStatus {
	for i := range wf.Status.StepStatuses {
		if wf.Status.StepStatuses[i].Name == step {
			return &wf.Status.StepStatuses[i]
		}
	}
	return nil
}

func approve(by, comment string) func(*v1alpha1.WorkflowSpec) {
	return func(s *v1alpha1.WorkflowSpec) {
		s.Approvals = append(s.Approvals, v1alpha1.Approval{Step: "review", By: by, Comment: comment})
	}
}

// TestSuspendWhileStepRuns: suspension lets the running step finish and keep
// its output, starts nothing, is not counted by the timeout, and resuming
// continues with that output.
func TestSuspendWhileStepRuns(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns)
	wf := stepWorkflow("pause", step("one", nil), step("two", map[string]string{"A": "${steps.one.output.a}"}))
	wf.Spec.TimeoutSeconds = new(int64(6))
	k.create(wf)
	one := k.waitTask("pause", "one", 0)
	k.run(one)

	k.control("pause", func(s *v1alpha1.WorkflowSpec) { s.Suspend = true })
	paused := k.waitWorkflow("pause", v1alpha1.WorkflowSuspended)
	assert.True(t, meta.IsStatusConditionTrue(paused.Status.Conditions, workflows.ConditionSuspended))
	assert.Contains(t, paused.Status.Message, "still running: one")
	k.finish(one, v1alpha1.TaskSucceeded, map[string]string{"a": "kept"})
	k.waitStep("pause", "one", v1alpha1.StepSucceeded)
	time.Sleep(7 * time.Second) // past the timeout, had suspension counted
	held := k.workflow("pause")
	assert.Equal(t, v1alpha1.WorkflowSuspended, held.Status.Phase, "suspended time is not counted by the timeout")
	assert.True(t, k.gone("pause", "two", 0), "no step starts while suspended")
	assert.Equal(t, map[string]string{"a": "kept"}, stepStatus(held, "one").Output)

	k.control("pause", func(s *v1alpha1.WorkflowSpec) { s.Suspend = false })
	two := k.waitTask("pause", "two", 0)
	assert.Equal(t, v1alpha1.TaskInput{"A": "kept"}, two.Spec.Input)
	resumed := k.waitWorkflow("pause", v1alpha1.WorkflowRunning)
	assert.GreaterOrEqual(t, resumed.Status.SuspendedSeconds, int64(7))
	assert.Nil(t, meta.FindStatusCondition(resumed.Status.Conditions, workflows.ConditionSuspended))
	k.finish(two, v1alpha1.TaskSucceeded, nil)
	k.waitWorkflow("pause", v1alpha1.WorkflowSucceeded)
}

// TestApprovalGate: draft → review (approval) → publish; the approval
// message shows the draft, publish reads the approver and comment.
func TestApprovalGate(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns)
	k.create(stepWorkflow("hitl",
		step("draft", nil),
		testkit.MakeApprovalStep("review", "publish ${steps.draft.output.title}?").ApprovalTimeout(600, v1alpha1.ApprovalTimeoutFail).Obj(),
		step("publish", map[string]string{"BY": "${steps.review.output.approver}", "NOTE": "${steps.review.output.comment}"}),
	))
	k.finish(k.waitTask("hitl", "draft", 0), v1alpha1.TaskSucceeded, map[string]string{"title": "Q3 report"})
	waiting := k.waitStep("hitl", "review", v1alpha1.StepWaiting)
	review := stepStatus(waiting, "review")
	assert.Equal(t, "publish Q3 report?", review.Message)
	assert.Equal(t, workflows.ReasonAwaitingApproval, review.Reason)
	assert.Contains(t, waiting.Status.Message, "waiting for approval: review")
	assert.Empty(t, review.TaskName, "an approval step runs no task")

	k.control("hitl", approve("alice", "ship it"))
	publish := k.waitTask("hitl", "publish", 0)
	assert.Equal(t, v1alpha1.TaskInput{"BY": "alice", "NOTE": "ship it"}, publish.Spec.Input)
	approved := stepStatus(k.waitStep("hitl", "review", v1alpha1.StepSucceeded), "review")
	require.NotNil(t, approved.Approval)
	assert.Equal(t, "alice", approved.Approval.By)
	assert.Equal(t, v1alpha1.DecisionApprove, approved.Approval.Decision)
	assert.Equal(t, "approved", approved.Output[workflows.OutputDecision])
	k.finish(publish, v1alpha1.TaskSucceeded, nil)
	k.waitWorkflow("hitl", v1alpha1.WorkflowSucceeded)
	assert.Equal(t, names("hitl", "draft 0", "publish 0"), k.taskNames("hitl"))
}

// TestApprovalOutcomes: a rejection, and a timeout that fails or skips, and
// an approval that comes after the timeout changes nothing.
func TestApprovalOutcomes(t *testing.T) {
	tests := []struct {
		name      string
		timeout   int64
		action    v1alpha1.ApprovalTimeoutAction
		decide    func(*v1alpha1.WorkflowSpec)
		phase     v1alpha1.WorkflowPhase
		reason    string
		published bool
	}{
		{name: "reject", timeout: 600, action: v1alpha1.ApprovalTimeoutFail, phase: v1alpha1.WorkflowFailed, reason: workflows.ReasonRejected,
			decide: func(s *v1alpha1.WorkflowSpec) {
				s.Approvals = append(s.Approvals, v1alpha1.Approval{Step: "review", By: "bob", Decision: v1alpha1.DecisionReject, Comment: "wrong numbers"})
			}},
		{name: "timeout-fail", timeout: 2, action: v1alpha1.ApprovalTimeoutFail, phase: v1alpha1.WorkflowFailed, reason: workflows.ReasonApprovalTimeout},
		{name: "timeout-skip", timeout: 2, action: v1alpha1.ApprovalTimeoutSkip, phase: v1alpha1.WorkflowSucceeded, reason: workflows.ReasonSucceeded, published: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newCluster(t)
			startManager(t, k.ns)
			k.create(stepWorkflow("gate",
				testkit.MakeApprovalStep("review", "ok?").ApprovalTimeout(tt.timeout, tt.action).Obj(),
				step("publish", nil)))
			k.waitStep("gate", "review", v1alpha1.StepWaiting)
			if tt.decide != nil {
				k.control("gate", tt.decide)
			}
			if tt.published {
				k.finish(k.waitTask("gate", "publish", 0), v1alpha1.TaskSucceeded, nil)
			}
			end := k.waitWorkflow("gate", tt.phase)
			assert.Equal(t, tt.reason, meta.FindStatusCondition(end.Status.Conditions, v1alpha1.ConditionReady).Reason, end.Status.Message)
			if !tt.published {
				// A late approval does not revive the workflow; a second
				// decision of the same writer in the same run is refused.
				if tt.decide != nil {
					late := k.workflow("gate")
					approve("bob", "late")(&late.Spec)
					_, err := k.cs.SchedulerV1alpha1().Workflows(k.ns).Update(context.Background(), late, metav1.UpdateOptions{})
					require.ErrorContains(t, err, "Duplicate value")
				}
				k.control("gate", approve("carol", "late"))
				time.Sleep(settle)
				assert.Equal(t, tt.phase, k.workflow("gate").Status.Phase)
				assert.True(t, k.gone("gate", "publish", 0))
			}
		})
	}
}

// TestStopMidDAG: stopping deletes the running step tasks, skips the rest,
// ends Failed with reason Stopped and reports it in the webhook.
func TestStopMidDAG(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns)
	recv := testkit.NewReceiver(t, testkit.OK)
	wf := stepWorkflow("halt", step("a", nil), step("b", nil, "a"), step("c", nil, "a"), step("d", nil, "b", "c"))
	wf.Spec.WebhookURL = recv.URL + "/done"
	k.create(wf)
	k.finish(k.waitTask("halt", "a", 0), v1alpha1.TaskSucceeded, map[string]string{"x": "1"})
	k.run(k.waitTask("halt", "b", 0))
	k.waitTask("halt", "c", 0)

	k.control("halt", func(s *v1alpha1.WorkflowSpec) { s.Stop = true })
	stopped := k.waitWorkflow("halt", v1alpha1.WorkflowFailed)
	assert.Equal(t, workflows.ReasonStopped, meta.FindStatusCondition(stopped.Status.Conditions, v1alpha1.ConditionReady).Reason)
	phases := map[string]v1alpha1.StepPhase{}
	for _, s := range stopped.Status.StepStatuses {
		phases[s.Name] = s.Phase
	}
	assert.Equal(t, map[string]v1alpha1.StepPhase{"a": v1alpha1.StepSucceeded, "b": v1alpha1.StepFailed, "c": v1alpha1.StepFailed, "d": v1alpha1.StepSkipped}, phases)
	require.Eventually(t, func() bool { return k.gone("halt", "b", 0) && k.gone("halt", "c", 0) }, wait, 20*time.Millisecond, "running steps are deleted")
	require.Eventually(t, func() bool { return len(recv.Requests()) > 0 }, wait, 20*time.Millisecond)
	var body workflows.Payload
	require.NoError(t, json.Unmarshal(recv.Requests()[0].Body, &body))
	assert.Equal(t, "Failed", body.Phase)
	assert.Equal(t, workflows.ReasonStopped, body.Reason)
}

// TestRetryFromFailure: retries run only what did not succeed, with the
// earlier steps' original outputs, each retry counted and recorded.
func TestRetryFromFailure(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns)
	k.create(stepWorkflow("again",
		step("a", nil),
		step("b", map[string]string{"X": "${steps.a.output.x}"}),
		step("c", map[string]string{"X": "${steps.a.output.x}", "Y": "${steps.b.output.y}"})))
	k.finish(k.waitTask("again", "a", 0), v1alpha1.TaskSucceeded, map[string]string{"x": "original"})
	k.finish(k.waitTask("again", "b", 0), v1alpha1.TaskFailed, nil)
	k.waitWorkflow("again", v1alpha1.WorkflowFailed)

	for n := int32(1); n <= 2; n++ {
		k.control("again", func(s *v1alpha1.WorkflowSpec) { s.Retry = n })
		b := k.waitTask("again", "b", n)
		assert.Equal(t, v1alpha1.TaskInput{"X": "original"}, b.Spec.Input, "retry %d", n)
		if n == 1 {
			k.finish(b, v1alpha1.TaskFailed, nil)
			failed := testkit.WaitFor(t, wait, func() *v1alpha1.Workflow { return k.workflow("again") },
				func(wf *v1alpha1.Workflow) bool {
					return wf.Status.Phase == v1alpha1.WorkflowFailed && wf.Status.Retries == 1
				},
				"retry 1 never failed")
			assert.Equal(t, v1alpha1.StepSkipped, stepStatus(failed, "c").Phase)
			continue
		}
		k.finish(b, v1alpha1.TaskSucceeded, map[string]string{"y": "fixed"})
	}
	c := k.waitTask("again", "c", 0)
	assert.Equal(t, v1alpha1.TaskInput{"X": "original", "Y": "fixed"}, c.Spec.Input)
	k.finish(c, v1alpha1.TaskSucceeded, nil)
	done := k.waitWorkflow("again", v1alpha1.WorkflowSucceeded)
	assert.Equal(t, int32(2), done.Status.Retries)
	require.Len(t, done.Status.RetryHistory, 2)
	assert.Equal(t, []string{"b", "c"}, done.Status.RetryHistory[0].Steps)
	assert.Equal(t, workflows.ReasonStepFailed, done.Status.RetryHistory[0].Reason)
	assert.Equal(t, int32(3), stepStatus(done, "b").Attempts)
	assert.Equal(t, int32(1), stepStatus(done, "a").Attempts, "a succeeded step is not run again")
	assert.Equal(t, names("again", "a 0", "b 0", "b 1", "b 2", "c 0"), k.taskNames("again"))
}

// TestRetryAfterStop: a stopped workflow is retried by clearing stop and
// raising retry in one write.
func TestRetryAfterStop(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns)
	k.create(stepWorkflow("restop", step("a", nil), step("b", nil)))
	k.run(k.waitTask("restop", "a", 0))
	k.control("restop", func(s *v1alpha1.WorkflowSpec) { s.Stop = true })
	k.waitWorkflow("restop", v1alpha1.WorkflowFailed)
	require.Eventually(t, func() bool { return k.gone("restop", "a", 0) }, wait, 20*time.Millisecond)

	k.control("restop", func(s *v1alpha1.WorkflowSpec) { s.Stop, s.Retry = false, 1 })
	k.finish(k.waitTask("restop", "a", 1), v1alpha1.TaskSucceeded, nil)
	k.finish(k.waitTask("restop", "b", 0), v1alpha1.TaskSucceeded, nil)
	done := k.waitWorkflow("restop", v1alpha1.WorkflowSucceeded)
	assert.Equal(t, workflows.ReasonStopped, done.Status.RetryHistory[0].Reason)
}
