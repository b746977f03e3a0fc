package workflows_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testkit"
	"opsnorth.io/scheduler/pkg/webhook"
	"opsnorth.io/scheduler/pkg/workflows"
)

func TestSequentialOutputsAndWebhook(t *testing.T) {
	k := newCluster(t)
	startedBefore := testutil.ToFloat64(workflows.StartedTotal)
	completedBefore := testutil.ToFloat64(workflows.CompletedTotal.WithLabelValues("Succeeded", "Succeeded"))
	startManager(t, k.ns)
	recv := testkit.NewReceiver(t, testkit.FailFirst(1, http.StatusServiceUnavailable))
	_, err := k.kube.CoreV1().Secrets(k.ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hook", Labels: map[string]string{labelkeys.User: "u1"}}, Data: map[string][]byte{"key": []byte("s3cret")},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	wf := stepWorkflow("seq",
		step("fetch", map[string]string{"Q": "${inputs.topic}"}),
		step("summarize", map[string]string{"TEXT": "${steps.0.output.body}", "LIT": "$${steps.0.output.body}"}),
		step("post", map[string]string{"SUMMARY": "${steps.summarize.output.summary}", "BOTH": "${steps.0.output.body}|${inputs.topic}"}),
	)
	wf.Spec.Input = map[string]string{"topic": "operators"}
	wf.Spec.WebhookURL = recv.URL + "/done"
	wf.Spec.WebhookSecretRef = &v1alpha1.SecretKeyReference{Name: "hook", Key: "key"}
	created := k.create(wf)

	fetch := k.waitTask("seq", "fetch", 0)
	assert.Equal(t, v1alpha1.TaskInput{"Q": "operators"}, fetch.Spec.Input)
	assert.Equal(t, fetch.Name, fetch.Spec.TaskID)
	assert.Equal(t, "u1", fetch.Spec.UserID)
	assert.Equal(t, []string{fetch.Name}, k.taskNames("seq"), "only the first step runs")
	// The step's task is created before the status that records it.
	running := k.waitWorkflow("seq", v1alpha1.WorkflowRunning)
	assert.Equal(t, int32(0), running.Status.CurrentStep)
	assert.Equal(t, "0/3", running.Status.Progress)
	k.run(fetch)
	k.finish(fetch, v1alpha1.TaskSucceeded, map[string]string{"body": "long text"})

	sum := k.waitTask("seq", "summarize", 0)
	require.Eventually(t, func() bool { return k.workflow("seq").Status.Progress == "1/3" }, wait, 20*time.Millisecond,
		"progress after the first step succeeded")
	assert.Equal(t, v1alpha1.TaskInput{"TEXT": "long text", "LIT": "${steps.0.output.body}"}, sum.Spec.Input)
	k.finish(sum, v1alpha1.TaskSucceeded, map[string]string{"summary": "short"})

	post := k.waitTask("seq", "post", 0)
	assert.Equal(t, v1alpha1.TaskInput{"SUMMARY": "short", "BOTH": "long text|operators"}, post.Spec.Input)
	k.finish(post, v1alpha1.TaskSucceeded, map[string]string{"url": "https://example.com/p/1"})

	done := k.waitWorkflow("seq", v1alpha1.WorkflowSucceeded)
	assert.Equal(t, int32(3), done.Status.CurrentStep)
	assert.Equal(t, "3/3", done.Status.Progress)
	assert.Equal(t, "all 3 steps succeeded", done.Status.Message)
	require.NotNil(t, done.Status.StartTime)
	require.NotNil(t, done.Status.CompletionTime)
	assert.Equal(t, done.Status.CompletionTime.Sub(done.Status.StartTime.Time).String(), done.Status.Duration)
	require.Len(t, done.Status.StepStatuses, 3)
	for i, want := range []map[string]string{{"body": "long text"}, {"summary": "short"}, {"url": "https://example.com/p/1"}} {
		s := done.Status.StepStatuses[i]
		assert.Equal(t, v1alpha1.StepSucceeded, s.Phase, s.Name)
		assert.Equal(t, int32(1), s.Attempts, s.Name)
		assert.Equal(t, want, s.Output, s.Name)
		assert.NotNil(t, s.StartTime, s.Name)
		assert.NotNil(t, s.CompletionTime, s.Name)
	}
	ready := meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, metav1.ConditionTrue, ready.Status)
	assert.Equal(t, done.Generation, ready.ObservedGeneration)
	assert.Nil(t, meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionReconciling))

	// The webhook: one refused attempt, then delivered; same key, signed.
	require.Eventually(t, func() bool {
		st := k.workflow("seq").Status.Webhook
		return st != nil && st.Delivered
	}, wait, 20*time.Millisecond)
	delivered := k.workflow("seq")
	assert.Equal(t, int32(2), delivered.Status.Webhook.Attempts)
	assert.Equal(t, int32(200), delivered.Status.Webhook.LastStatusCode)
	reqs := recv.Requests()
	require.Len(t, reqs, 2)
	for _, req := range reqs {
		assert.Equal(t, string(created.UID)+"/completion", req.Header.Get(webhook.HeaderIdempotencyKey))
		assert.Equal(t, workflows.WebhookEvent, req.Header.Get(webhook.HeaderEvent))
		assert.NoError(t, webhook.Verify("s3cret", req.Header, req.Body, req.At, webhook.DefaultTolerance))
		assert.Equal(t, "/done", req.Path)
	}
	assert.Equal(t, reqs[0].Body, reqs[1].Body, "every attempt carries the same body")
	var body workflows.Payload
	require.NoError(t, json.Unmarshal(reqs[1].Body, &body))
	assert.Equal(t, "Succeeded", body.Phase)
	assert.Equal(t, created.UID, body.UID)
	require.Len(t, body.Steps, 3)
	assert.Equal(t, map[string]string{"summary": "short"}, body.Steps[1].Output)

	// Events: the workflow's end only (steps are in status; failures are events).
	require.Eventually(t, func() bool {
		list, err := k.kube.EventsV1().Events(k.ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		reasons := map[string]int{}
		for _, e := range list.Items {
			if e.Regarding.Name == "seq" && e.Regarding.Kind == "Workflow" {
				reasons[e.Reason]++
			}
		}
		return assert.ObjectsAreEqual(map[string]int{"WorkflowSucceeded": 1, "WebhookFailed": 1, "WebhookDelivered": 1}, reasons)
	}, wait, 50*time.Millisecond, "one event for the workflow's end and one per webhook outcome, none per step")
	assert.Equal(t, 1.0, testutil.ToFloat64(workflows.StartedTotal)-startedBefore)
	assert.Equal(t, 1.0, testutil.ToFloat64(workflows.CompletedTotal.WithLabelValues("Succeeded", "Succeeded"))-completedBefore)

	// Converged: nothing is written any more.
	rv := delivered.ResourceVersion
	assert.Never(t, func() bool {
		wf, err := k.cs.SchedulerV1alpha1().Workflows(k.ns).Get(context.Background(), "seq", metav1.GetOptions{})
		return err != nil || wf.ResourceVersion != rv || len(recv.Requests()) != 2
	}, settle, 100*time.Millisecond, "a converged workflow was written again, or its webhook sent again")
	assert.Equal(t, rv, k.workflow("seq").ResourceVersion, "a converged workflow was written again")
	assert.Len(t, recv.Requests(), 2, "a delivered webhook was sent again")
	assert.Len(t, k.taskNames("seq"), 3)
}

func TestDiamondDAG(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns)
	k.create(stepWorkflow("dia",
		step("plan", nil),
		step("left", map[string]string{"P": "${steps.plan.output.p}"}, "plan"),
		step("right", map[string]string{"P": "${steps.0.output.p}"}, "plan"),
		step("join", map[string]string{"L": "${steps.left.output.v}", "R": "${steps.2.output.v}", "P": "${steps.plan.output.p}"}, "left", "right"),
	))
	k.finish(k.waitTask("dia", "plan", 0), v1alpha1.TaskSucceeded, map[string]string{"p": "P"})
	left := k.waitTask("dia", "left", 0)
	right := k.waitTask("dia", "right", 0)
	assert.Equal(t, v1alpha1.TaskInput{"P": "P"}, left.Spec.Input)
	assert.Equal(t, v1alpha1.TaskInput{"P": "P"}, right.Spec.Input)
	require.Eventually(t, func() bool {
		st := k.workflow("dia").Status
		return len(st.StepStatuses) == 4 && st.StepStatuses[1].Phase == v1alpha1.StepRunning && st.StepStatuses[2].Phase == v1alpha1.StepRunning
	}, wait, 20*time.Millisecond, "both branches run in parallel")

	k.finish(left, v1alpha1.TaskSucceeded, map[string]string{"v": "L"})
	require.Eventually(t, func() bool {
		st := k.workflow("dia").Status
		return st.StepStatuses[1].Phase == v1alpha1.StepSucceeded
	}, wait, 20*time.Millisecond)
	assert.True(t, k.gone("dia", "join", 0), "join must wait for both branches")
	assert.Equal(t, int32(2), k.workflow("dia").Status.CurrentStep)

	k.finish(right, v1alpha1.TaskSucceeded, map[string]string{"v": "R"})
	join := k.waitTask("dia", "join", 0)
	assert.Equal(t, v1alpha1.TaskInput{"L": "L", "R": "R", "P": "P"}, join.Spec.Input)
	k.finish(join, v1alpha1.TaskSucceeded, nil)
	k.waitWorkflow("dia", v1alpha1.WorkflowSucceeded)
	assert.Equal(t, names("dia", "plan 0", "left 0", "right 0", "join 0"), k.taskNames("dia"))
}

func TestRetriesThenSuccess(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns)
	flaky := step("flaky", nil)
	flaky.Retries = &v1alpha1.RetryPolicy{Limit: 3, BackoffSeconds: new(int32(1)), MaxBackoffSeconds: new(int32(2))}
	k.create(stepWorkflow("retry", flaky, step("after", map[string]string{"X": "${steps.flaky.output.x}"})))

	first := k.waitTask("retry", "flaky", 0)
	k.finish(first, v1alpha1.TaskFailed, nil)
	failedAt := time.Now()
	require.Eventually(t, func() bool {
		s := k.workflow("retry").Status.StepStatuses
		return len(s) == 2 && s[0].Phase == v1alpha1.StepRetrying
	}, wait, 20*time.Millisecond)
	retrying := k.workflow("retry").Status.StepStatuses[0]
	require.NotNil(t, retrying.NextAttemptTime)
	assert.Equal(t, "attempt 1 Failed: agent exited with code 1", retrying.Message)

	second := k.waitTask("retry", "flaky", 1)
	assert.GreaterOrEqual(t, time.Since(failedAt), 900*time.Millisecond, "the retry waited for its backoff")
	k.finish(second, v1alpha1.TaskTimeout, nil)
	third := k.waitTask("retry", "flaky", 2)
	k.finish(third, v1alpha1.TaskSucceeded, map[string]string{"x": "third time lucky"})
	after := k.waitTask("retry", "after", 0)
	assert.Equal(t, v1alpha1.TaskInput{"X": "third time lucky"}, after.Spec.Input)
	k.finish(after, v1alpha1.TaskSucceeded, nil)

	done := k.waitWorkflow("retry", v1alpha1.WorkflowSucceeded)
	assert.Equal(t, int32(3), done.Status.StepStatuses[0].Attempts)
	assert.Equal(t, third.Name, done.Status.StepStatuses[0].TaskName)
	assert.Nil(t, done.Status.StepStatuses[0].NextAttemptTime)
	assert.Equal(t, names("retry", "flaky 0", "flaky 1", "flaky 2", "after 0"), k.taskNames("retry"))
}

func TestRetriesExhaustedStopSiblings(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns)
	bad := step("bad", nil, "root")
	bad.Retries = &v1alpha1.RetryPolicy{Limit: 1, BackoffSeconds: new(int32(0)), MaxBackoffSeconds: new(int32(0))}
	k.create(stepWorkflow("fail", step("root", nil), bad, step("slow", nil, "root"), step("last", nil, "bad", "slow")))

	k.finish(k.waitTask("fail", "root", 0), v1alpha1.TaskSucceeded, nil)
	k.run(k.waitTask("fail", "slow", 0))
	k.finish(k.waitTask("fail", "bad", 0), v1alpha1.TaskFailed, nil)
	k.finish(k.waitTask("fail", "bad", 1), v1alpha1.TaskFailed, nil)

	failed := k.waitWorkflow("fail", v1alpha1.WorkflowFailed)
	assert.Equal(t, `step "bad" failed: Failed after 2 attempt(s): agent exited with code 1`, failed.Status.Message)
	ready := meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, workflows.ReasonStepFailed, ready.Reason)
	steps := failed.Status.StepStatuses
	assert.Equal(t, []v1alpha1.StepPhase{v1alpha1.StepSucceeded, v1alpha1.StepFailed, v1alpha1.StepFailed, v1alpha1.StepSkipped},
		[]v1alpha1.StepPhase{steps[0].Phase, steps[1].Phase, steps[2].Phase, steps[3].Phase})
	assert.Contains(t, steps[2].Message, "stopped: the workflow failed")
	require.Eventually(t, func() bool { return k.gone("fail", "slow", 0) }, wait, 20*time.Millisecond, "the running sibling is stopped")
	assert.Equal(t, names("fail", "root 0", "bad 0", "bad 1"), k.taskNames("fail"), "no new step starts, no third attempt")
}

func TestMissingOutputKey(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns)
	k.create(stepWorkflow("miss", step("produce", nil), step("consume", map[string]string{"V": "${steps.produce.output.answer}"})))
	k.finish(k.waitTask("miss", "produce", 0), v1alpha1.TaskSucceeded, map[string]string{"other": "1"})
	failed := k.waitWorkflow("miss", v1alpha1.WorkflowFailed)
	want := `step "consume" failed: input "V": ${steps.produce.output.answer}: step "produce" produced no output key "answer"`
	assert.Equal(t, want, failed.Status.Message)
	ready := meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, workflows.ReasonMissingOutput, ready.Reason)
	assert.Equal(t, names("miss", "produce 0"), k.taskNames("miss"))
}

func TestInvalidSpecFailsBeforeAnyStep(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns)
	k.create(stepWorkflow("cycle", step("a", nil, "c"), step("b", nil, "a"), step("c", nil, "b")))
	k.create(stepWorkflow("ahead", step("a", map[string]string{"X": "${steps.b.output.x}"}), step("b", nil)))
	for name, want := range map[string]string{
		"cycle": "invalid spec: invalid workflow graph: dependsOn forms a cycle through steps a, b, c",
		"ahead": `invalid spec: step "a" input "X": ${steps.b.output.x}: step "b" is not an ancestor of step "a", so its output is not available`,
	} {
		failed := k.waitWorkflow(name, v1alpha1.WorkflowFailed)
		assert.Equal(t, want, failed.Status.Message)
		ready := meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionReady)
		require.NotNil(t, ready)
		assert.Equal(t, workflows.ReasonInvalidSpec, ready.Reason)
		assert.Empty(t, k.taskNames(name))
	}
}

func TestWorkflowTimeout(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns)
	wf := stepWorkflow("slow", step("first", nil), step("second", nil))
	wf.Spec.TimeoutSeconds = new(int64(2))
	k.create(wf)
	createdAt := time.Now()
	k.run(k.waitTask("slow", "first", 0))
	failed := k.waitWorkflow("slow", v1alpha1.WorkflowFailed)
	assert.Equal(t, "workflow timed out after 2s", failed.Status.Message)
	ready := meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, workflows.ReasonTimeout, ready.Reason)
	assert.GreaterOrEqual(t, time.Since(createdAt), 2*time.Second, "the timeout never fires early")
	assert.GreaterOrEqual(t, failed.Status.CompletionTime.Sub(failed.Status.StartTime.Time), 2*time.Second)
	assert.Equal(t, v1alpha1.StepFailed, failed.Status.StepStatuses[0].Phase)
	assert.Equal(t, v1alpha1.StepSkipped, failed.Status.StepStatuses[1].Phase)
	require.Eventually(t, func() bool { return k.gone("slow", "first", 0) }, wait, 20*time.Millisecond, "the running step is stopped")
	assert.Empty(t, k.taskNames("slow"))
}

// TestOutputBudget: a step whose output is larger than its agent could
// have returned (the kubelet's 4096 bytes; someone else wrote the task's
// status) fails with reason OutputTooLarge; nothing of it is stored.
func TestOutputBudget(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns)
	k.create(stepWorkflow("big", step("huge", nil), step("next", nil)))
	k.finish(k.waitTask("big", "huge", 0), v1alpha1.TaskSucceeded, map[string]string{"blob": strings.Repeat("x", 5000)})
	failed := k.waitWorkflow("big", v1alpha1.WorkflowFailed)
	assert.Equal(t, `step "huge" failed: output is 5004 bytes, over the budget of 4096 bytes per step`, failed.Status.Message)
	ready := meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, workflows.ReasonOutputTooLarge, ready.Reason)
	assert.Nil(t, failed.Status.StepStatuses[0].Output)
	assert.Equal(t, v1alpha1.StepSkipped, failed.Status.StepStatuses[1].Phase)
	assert.Equal(t, names("big", "huge 0"), k.taskNames("big"))
}
