package plugin

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testkit"
)

// watching is a watch command running in the background.
type watching struct {
	t    *testing.T
	out  *syncBuffer
	done chan result
	stop context.CancelFunc
}

func (k *cluster) startWatch(args ...string) *watching {
	k.t.Helper()
	ctx, cancel := context.WithCancel(k.t.Context())
	w := &watching{t: k.t, out: &syncBuffer{}, done: make(chan result, 1), stop: cancel}
	go func() { w.done <- k.runContext(ctx, w.out, append([]string{"watch"}, args...)...) }()
	k.t.Cleanup(cancel)
	return w
}

// renders waits until the watch printed n renders (each starts with "Name:").
func (w *watching) renders(n int) {
	w.t.Helper()
	require.Eventually(w.t, func() bool { return strings.Count(w.out.String(), "Name:") >= n },
		30*time.Second, 10*time.Millisecond, "watch never printed %d renders; got:\n%s", n, w.out.String())
}

// result waits for the watch to end.
func (w *watching) result() result {
	w.t.Helper()
	select {
	case r := <-w.done:
		return r
	case <-time.After(30 * time.Second):
		w.t.Fatalf("watch did not end; printed:\n%s", w.out.String())
		return result{}
	}
}

// TestWatch re-renders on each change until the object ends: a workflow
// through an approval to Succeeded, a task to Failed (an error), a
// userdeployment until --timeout, a deletion, and Ctrl-C.
func TestWatch(t *testing.T) {
	cluster := newCluster(t, "watch")

	t.Run("workflow-until-succeeded", func(t *testing.T) {
		k := cluster.in(t)
		k.createWorkflow(waitingApproval())
		w := k.startWatch("wf", "draft-review", "--timeout=1m")
		w.renders(1)
		k.setWorkflowStatus("draft-review", func(st *v1alpha1.WorkflowStatus) {
			st.StepStatuses[1] = v1alpha1.StepStatus{Name: "review", Phase: v1alpha1.StepSucceeded, StartTime: at(120), CompletionTime: at(200),
				Approval: &v1alpha1.ApprovalRecord{Decision: v1alpha1.DecisionApprove, By: user, Comment: "ship it", Time: *at(200)},
				Output:   map[string]string{"decision": "approved", "approver": user, "comment": "ship it", "approvedAt": "2026-11-30T10:03:20Z"}}
			st.StepStatuses[2] = v1alpha1.StepStatus{Name: "publish", Phase: v1alpha1.StepRunning, Attempts: 1,
				TaskName: taskName("draft-review", "publish", 0), StartTime: at(200)}
		})
		w.renders(2)
		k.setWorkflowStatus("draft-review", func(st *v1alpha1.WorkflowStatus) {
			st.Phase, st.CompletionTime, st.Duration, st.CurrentStep = v1alpha1.WorkflowSucceeded, at(280), "4m40s", 3
			st.StepStatuses[2].Phase, st.StepStatuses[2].CompletionTime = v1alpha1.StepSucceeded, at(280)
			st.StepStatuses[2].Output = map[string]string{"url": "https://blog.example.com/42"}
		})
		r := w.result()
		require.NoError(t, r.err)
		golden(t, "watch-workflow-until-succeeded", r.text())
	})

	t.Run("task-until-failed", func(t *testing.T) {
		k := cluster.in(t)
		task := testkit.MakeAgentTask("flaky", "").Obj()
		task.Status = v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskRunning, StartTime: at(60), JobName: "flaky", PodName: "flaky-q8v4z"}
		k.createTask(task)
		w := k.startWatch("task", "flaky")
		w.renders(1)
		k.setTaskStatus("flaky", func(st *v1alpha1.AgentTaskStatus) {
			st.Phase, st.CompletionTime, st.ExitCode = v1alpha1.TaskFailed, at(90), new(int32(3))
			st.Reason, st.Message = "Error", "agent exited with code 3"
		})
		r := w.result()
		require.EqualError(t, r.err, "agenttask flaky ended Failed")
		golden(t, "watch-task-until-failed", r.text())
	})

	t.Run("userdeployment-until-timeout", func(t *testing.T) {
		k := cluster.in(t)
		ud := testkit.MakeUserDeployment("site", "", "u1").Template("static").Obj()
		ud.Status = v1alpha1.UserDeploymentStatus{Phase: v1alpha1.PhaseProvisioning, Conditions: []metav1.Condition{
			condition(v1alpha1.ConditionReady, metav1.ConditionFalse, "Provisioning", "waiting for 1 Deployment"),
			condition(v1alpha1.ConditionReconciling, metav1.ConditionTrue, "Provisioning", "waiting for 1 Deployment"),
		}}
		k.createUserDeployment(ud)
		r := k.startWatch("ud", "site", "--timeout=1s").result()
		require.EqualError(t, r.err, "userdeployment site has not finished after 1s")
		golden(t, "watch-userdeployment-until-timeout", r.text())
	})

	t.Run("deleted", func(t *testing.T) {
		k := cluster.in(t)
		k.createWorkflow(suspended())
		w := k.startWatch("wf/nightly")
		w.renders(1)
		require.NoError(t, k.cs.SchedulerV1alpha1().Workflows(k.ns).Delete(t.Context(), "nightly", metav1.DeleteOptions{}))
		r := w.result()
		require.EqualError(t, r.err, "workflow nightly was deleted")
		golden(t, "watch-deleted", r.text())
	})

	t.Run("interrupted", func(t *testing.T) {
		k := cluster.in(t)
		k.createWorkflow(runningDAG())
		w := k.startWatch("wf", "research")
		w.renders(1)
		w.stop() // Ctrl-C
		r := w.result()
		assert.NoError(t, r.err, "Ctrl-C ends a watch without an error")
		assert.Equal(t, 1, strings.Count(r.out, "Name:"))
	})
}
