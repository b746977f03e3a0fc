//go:build chaos

package chaos

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"opsnorth.io/scheduler/pkg/localcluster"
)

// TestAPIServerRestartMidBurst runs a baseline burst, then the same burst
// with kube-apiserver restarted midway: every manager process must live
// through it (no exit, no restart) and the burst converge as the baseline did.
func TestAPIServerRestartMidBurst(t *testing.T) {
	c := requireCluster(t)
	const drill = "apiserver_restart_mid_burst"
	record(t, drill, "burst", map[string]int{"tasks": *burstTasks, "workflows": *burstWorkflows, "steps": *burstSteps})

	base := &burst{run: "abase", tasks: *burstTasks, workflows: *burstWorkflows, steps: *burstSteps, taskDelay: "2s", stepDelay: "1s", rcv: newReceiver(t)}
	base.rcv.up(t)
	_, done := base.start(t)
	require.NoError(t, <-done)
	baseline := base.converge(t, 5*time.Minute)
	record(t, drill, "baseline", baseline)

	var managers []*localcluster.Manager
	for _, comp := range localcluster.Components {
		managers = append(managers, running(comp)...)
	}
	pids := map[string]int{}
	for _, m := range managers {
		pids[m.Process.Name] = m.Process.PID()
	}
	record(t, drill, "manager_pids_before", pids)

	fault := &burst{run: "arestart", tasks: *burstTasks, workflows: *burstWorkflows, steps: *burstSteps, taskDelay: "2s", stepDelay: "1s", rcv: newReceiver(t)}
	fault.rcv.up(t)
	half, done := fault.start(t)
	<-half
	down, err := c.RestartAPIServer(t.Context())
	require.NoError(t, err)
	record(t, drill, "apiserver_down_seconds", down.Seconds())
	require.NoError(t, <-done)
	faulted := fault.converge(t, 5*time.Minute)
	record(t, drill, "faulted", faulted)
	record(t, drill, "faulted_over_baseline_seconds_ratio", faulted.Seconds/baseline.Seconds)

	for _, m := range managers {
		assert.False(t, m.Process.Exited(), "%s lived through the apiserver restart (%s)", m.Process.Name, m.Process.State())
		assert.Equal(t, pids[m.Process.Name], m.Process.PID(), "%s was not restarted", m.Process.Name)
	}
	for _, o := range []outcome{baseline, faulted} {
		assert.Equal(t, *burstTasks, o.TaskPhases["Succeeded"], "every task Succeeded")
		assert.Equal(t, *burstWorkflows, o.WorkflowPhases["Succeeded"], "every workflow Succeeded")
		assert.Zero(t, o.JobsPerTaskOver1+o.TasksWithoutJob+o.StepTasksOver1, "no duplicate or missing Job or step task")
		assert.Equal(t, o.Webhooks.Expected, o.Webhooks.Delivered, "every webhook delivered")
	}
}
