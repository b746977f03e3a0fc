package plugin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// succeeded is a finished sequential workflow.
func succeeded() *v1alpha1.Workflow {
	wf := workflow("done", agentStep("only"))
	wf.Status = v1alpha1.WorkflowStatus{Phase: v1alpha1.WorkflowSucceeded, StartTime: at(0), CompletionTime: at(30), Duration: "30s",
		StepStatuses: []v1alpha1.StepStatus{{Name: "only", Phase: v1alpha1.StepSucceeded, Attempts: 1,
			TaskName: taskName("done", "only", 0), StartTime: at(0), CompletionTime: at(30)}}}
	return wf
}

// TestControls merge-patches spec.suspend, spec.stop and spec.retry, and
// refuses what makes no sense in the workflow's phase before writing.
func TestControls(t *testing.T) {
	k := newCluster(t, "control")
	k.createWorkflow(runningDAG())
	k.createWorkflow(suspended())
	k.createWorkflow(succeeded())
	stopped := failedAfterRetry()
	stopped.Spec.Stop = true
	k.createWorkflow(stopped)

	t.Run("suspend-resume-stop", func(t *testing.T) {
		k := k.in(t)
		r := k.run("suspend", "research")
		require.NoError(t, r.err)
		assert.True(t, k.workflow("research").Spec.Suspend)
		text := r.text()
		r = k.run("resume", "research")
		require.NoError(t, r.err)
		assert.False(t, k.workflow("research").Spec.Suspend)
		text += r.text()
		r = k.run("resume", "research")
		require.NoError(t, r.err)
		text += r.text()
		r = k.run("stop", "research")
		require.NoError(t, r.err)
		assert.True(t, k.workflow("research").Spec.Stop)
		text += r.text()
		r = k.run("resume", "nightly")
		require.NoError(t, r.err)
		assert.False(t, k.workflow("nightly").Spec.Suspend)
		golden(t, "control-suspend-resume-stop", text+r.text())
	})

	t.Run("retry", func(t *testing.T) {
		k := k.in(t)
		r := k.run("retry", "etl")
		require.NoError(t, r.err)
		golden(t, "control-retry", r.text())
		spec := k.workflow("etl").Spec
		assert.Equal(t, int32(2), spec.Retry, "status.retries+1")
		assert.False(t, spec.Stop, "a retry clears stop in the same write")
	})

	t.Run("refusals", func(t *testing.T) {
		k := k.in(t)
		runGolden(t, k, []getCase{
			{golden: "control-retry-running", args: []string{"retry", "research"}, wantErr: "workflow research is Running: only a Failed workflow can be retried"},
			{golden: "control-retry-requested", args: []string{"retry", "etl"}, wantErr: "retry 2 is already requested"},
			{golden: "control-stop-finished", args: []string{"stop", "done"}, wantErr: "workflow done already finished (Succeeded): nothing to stop"},
			{golden: "control-suspend-finished", args: []string{"suspend", "done"}, wantErr: "nothing to suspend"},
			{golden: "control-not-found", args: []string{"suspend", "nope"}, wantErr: `workflow "nope" not found`},
		})
		assert.Equal(t, int32(0), k.workflow("research").Spec.Retry)
		assert.False(t, k.workflow("done").Spec.Stop)
	})

	t.Run("retry-conflicts-with-a-concurrent-change", func(t *testing.T) {
		k := k.in(t)
		wf := failedAfterRetry()
		wf.Name = "raced"
		k.createWorkflow(wf)
		o := k.options(&syncBuffer{}, &syncBuffer{})
		*o.ConfigFlags.KubeConfig, *o.ConfigFlags.Namespace = k.kubeconfig, k.ns
		c, err := o.connect()
		require.NoError(t, err)
		ctl := retryControl()
		check := ctl.check
		ctl.check = func(wf *v1alpha1.Workflow) error {
			// Someone else changes the workflow between our read and write.
			_, err := k.cs.SchedulerV1alpha1().Workflows(k.ns).Patch(t.Context(), wf.Name, types.MergePatchType,
				[]byte(`{"metadata":{"annotations":{"touched":"yes"}}}`), metav1.PatchOptions{})
			require.NoError(t, err)
			return check(wf)
		}
		err = o.runControl(t.Context(), c, ctl, "raced")
		require.ErrorContains(t, err, "workflow raced changed since it was read")
		assert.Equal(t, int32(1), k.workflow("raced").Spec.Retry, "no retry was written")
	})
}
