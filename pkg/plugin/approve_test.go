package plugin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// twoGates is a DAG in its second run (one retry) with two approval steps
// waiting after a build.
func twoGates() *v1alpha1.Workflow {
	wf := workflow("release", agentStep("build"), approvalStep("legal", "License check", "build"),
		approvalStep("security", "Threat model?", "build"), agentStep("ship", "legal", "security"))
	wf.Spec.Retry = 1
	wf.Status = v1alpha1.WorkflowStatus{Phase: v1alpha1.WorkflowRunning, StartTime: at(0), Retries: 1,
		StepStatuses: []v1alpha1.StepStatus{
			{Name: "build", Phase: v1alpha1.StepSucceeded, Attempts: 2, FirstAttempt: 1, TaskName: taskName("release", "build", 1),
				StartTime: at(0), CompletionTime: at(60)},
			{Name: "legal", Phase: v1alpha1.StepWaiting, StartTime: at(60), Message: "License check"},
			{Name: "security", Phase: v1alpha1.StepWaiting, StartTime: at(60), Message: "Threat model?"},
		}}
	return wf
}

// TestApprove appends decisions, signed with the caller's username, and
// refuses steps that are not approval
// steps, not waiting, or already decided, before writing anything.
func TestApprove(t *testing.T) {
	k := newCluster(t, "approve")
	k.createWorkflow(waitingApproval())
	k.createWorkflow(twoGates())

	t.Run("approve", func(t *testing.T) {
		k := k.in(t)
		r := k.run("approve", "draft-review", "review", "--comment", "looks good")
		require.NoError(t, r.err)
		golden(t, "approve", r.text())
		want := v1alpha1.Approval{Step: "review", Retry: 0, Decision: v1alpha1.DecisionApprove, By: user, Comment: "looks good"}
		assert.Equal(t, []v1alpha1.Approval{want}, k.workflow("draft-review").Spec.Approvals)

		// The workflows manager records the decision; get shows the approver.
		k.setWorkflowStatus("draft-review", func(st *v1alpha1.WorkflowStatus) {
			st.StepStatuses[1] = v1alpha1.StepStatus{Name: "review", Phase: v1alpha1.StepSucceeded, StartTime: at(120), CompletionTime: at(200),
				Approval: &v1alpha1.ApprovalRecord{Decision: v1alpha1.DecisionApprove, By: user, Comment: "looks good", Time: *at(200)},
				Output:   map[string]string{"decision": "approved", "approver": user, "comment": "looks good", "approvedAt": "2026-11-30T10:03:20Z"}}
		})
		golden(t, "approve-then-get", k.run("get", "wf", "draft-review").text())
	})

	t.Run("records the groups the approvers name", func(t *testing.T) {
		k := k.in(t)
		wf := waitingApproval()
		wf.Name = "by-group"
		wf.Spec.Approvers = &v1alpha1.Approvers{Groups: []string{"release-managers", "system:masters"}}
		k.createWorkflow(wf)
		require.NoError(t, k.run("approve", "by-group", "review").err)
		got := k.workflow("by-group").Spec.Approvals
		require.Len(t, got, 1)
		assert.Equal(t, []string{"system:masters"}, got[0].ByGroups, "only the caller's groups that the approvers name")
	})

	t.Run("approve-and-reject-in-a-retry", func(t *testing.T) {
		k := k.in(t)
		r1 := k.run("approve", "release", "legal")
		require.NoError(t, r1.err)
		r2 := k.run("approve", "release", "security", "--reject", "--comment", "no threat model")
		require.NoError(t, r2.err)
		golden(t, "approve-reject", r1.text()+r2.text())
		assert.Equal(t, []v1alpha1.Approval{
			{Step: "legal", Retry: 1, Decision: v1alpha1.DecisionApprove, By: user},
			{Step: "security", Retry: 1, Decision: v1alpha1.DecisionReject, By: user, Comment: "no threat model"},
		}, k.workflow("release").Spec.Approvals, "decisions belong to the run they were made in (status.retries)")
	})

	t.Run("a decision that races another writes nothing", func(t *testing.T) {
		k := k.in(t)
		race := waitingApproval()
		race.Name = "race"
		k.createWorkflow(race)
		stale := k.workflow("race")
		require.NoError(t, k.run("approve", "race", "review").err)
		patch, err := appendApproval(stale, v1alpha1.Approval{Step: "review", Decision: v1alpha1.DecisionReject, By: "bob"})
		require.NoError(t, err)
		_, err = k.cs.SchedulerV1alpha1().Workflows(k.ns).Patch(t.Context(), "race", types.JSONPatchType, patch, metav1.PatchOptions{})
		require.Error(t, err, "the list was created meanwhile: the patch's test fails")
		assert.Equal(t, []v1alpha1.Approval{{Step: "review", Decision: v1alpha1.DecisionApprove, By: user}}, k.workflow("race").Spec.Approvals)
	})

	t.Run("a status write between read and write is read again", func(t *testing.T) {
		k := k.in(t)
		busy := waitingApproval()
		busy.Name = "busy"
		k.createWorkflow(busy)
		writes := 0
		r := k.runWith(t.Context(), &syncBuffer{}, func(o *Options) {
			o.beforeWrite = func() {
				if writes++; writes == 1 {
					k.setWorkflowStatus("busy", func(st *v1alpha1.WorkflowStatus) { st.Message = "a sibling step moved on" })
				}
			}
		}, "approve", "busy", "review")
		require.NoError(t, r.err, r.text())
		assert.Equal(t, 2, writes, "the first write failed its resourceVersion test and was made again")
		assert.Equal(t, []v1alpha1.Approval{{Step: "review", Decision: v1alpha1.DecisionApprove, By: user}}, k.workflow("busy").Spec.Approvals)
	})

	t.Run("refusals", func(t *testing.T) {
		k := k.in(t)
		pending := waitingApproval()
		pending.Name = "not-yet"
		pending.Status.StepStatuses[0] = v1alpha1.StepStatus{Name: "draft", Phase: v1alpha1.StepRunning, Attempts: 1,
			TaskName: taskName("not-yet", "draft", 0), StartTime: at(0)}
		pending.Status.StepStatuses[1] = v1alpha1.StepStatus{Name: "review", Phase: v1alpha1.StepPending}
		k.createWorkflow(pending)
		runGolden(t, k, []getCase{
			{golden: "approve-not-an-approval-step", args: []string{"approve", "not-yet", "draft"}, wantErr: "draft of workflow not-yet is not an approval step"},
			{golden: "approve-not-waiting", args: []string{"approve", "not-yet", "review"}, wantErr: "is not waiting for approval (phase Pending)"},
			{golden: "approve-already-decided", args: []string{"approve", "release", "legal", "--reject"}, wantErr: "already has your decision in this run: Approve by alice"},
			{golden: "approve-no-such-step", args: []string{"approve", "not-yet", "deploy"}, wantErr: `has no step "deploy"`},
		})
		assert.Empty(t, k.workflow("not-yet").Spec.Approvals, "a refusal writes nothing")
		assert.Len(t, k.workflow("release").Spec.Approvals, 2)
	})
}
