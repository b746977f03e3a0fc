//go:build chaos

package chaos

import (
	"flag"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	burstTasks     = flag.Int("chaos.tasks", 500, "AgentTasks of each burst")
	burstWorkflows = flag.Int("chaos.workflows", 50, "Workflows of each burst")
	burstSteps     = flag.Int("chaos.steps", 3, "steps of each workflow")
	webhookOutage  = flag.Duration("chaos.webhook-outage", 30*time.Second, "how long the webhook receiver is down from the start of the faulted burst")
)

// Handover times with the managers' default lease settings (15s lease, 500ms
// retry period). The goals are 17s after SIGKILL and 3s after
// SIGTERM. A standby retries every retry period jittered by up to 120%
// (0.5s to 1.1s), so after SIGKILL it takes over at most one lease plus two
// jittered retry periods after the kill (it may have seen the last renewal
// one retry late): 17.2s; after a released Lease, at most one jittered retry
// period. The drills fail past those bounds (plus pollSlack for the drill's
// own polling and API latency) and record whether each handover met the goal.
const (
	leaseDuration         = 15 * time.Second
	maxRetryPeriod        = 1100 * time.Millisecond
	pollSlack             = 500 * time.Millisecond
	killHandoverGoal      = 17 * time.Second
	killHandoverBound     = leaseDuration + 2*maxRetryPeriod + pollSlack
	gracefulHandoverGoal  = 3 * time.Second
	gracefulHandoverBound = maxRetryPeriod + pollSlack
)

// TestLeaderKillMidBurst runs a baseline burst with no fault, then the same
// burst with the webhook receiver down for -chaos.webhook-outage while the
// leaders of tasks and workflows get SIGKILL midway. Both must end with
// every task and workflow terminal, one Job per task, one AgentTask per
// workflow step and every webhook delivered (repeats only with the same
// Idempotency-Key). Then each component's leader gets SIGTERM: the Lease is
// released on cancel and a standby takes over within 3s.
func TestLeaderKillMidBurst(t *testing.T) {
	requireCluster(t)
	const drill = "leader_kill_mid_burst"
	record(t, drill, "burst", map[string]int{"tasks": *burstTasks, "workflows": *burstWorkflows, "steps": *burstSteps})
	record(t, drill, "webhook_outage_seconds", webhookOutage.Seconds())

	base := &burst{run: "base", tasks: *burstTasks, workflows: *burstWorkflows, steps: *burstSteps, taskDelay: "2s", stepDelay: "1s", rcv: newReceiver(t)}
	base.rcv.up(t)
	_, done := base.start(t)
	require.NoError(t, <-done)
	baseline := base.converge(t, 5*time.Minute)
	record(t, drill, "baseline", baseline)

	fault := &burst{run: "kill", tasks: *burstTasks, workflows: *burstWorkflows, steps: *burstSteps, taskDelay: "2s", stepDelay: "1s", rcv: newReceiver(t)}
	half, done := fault.start(t)
	var upWG sync.WaitGroup
	upWG.Go(func() {
		time.Sleep(time.Until(fault.created.Add(*webhookOutage)))
		fault.rcv.up(t)
	})
	<-half
	var kills []handover
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, comp := range []string{"tasks", "workflows"} {
		old := leader(t, comp)
		wg.Go(func() {
			h := signalLeader(t, comp, old, syscall.SIGKILL)
			mu.Lock()
			kills = append(kills, h)
			mu.Unlock()
		})
	}
	wg.Wait()
	require.NoError(t, <-done)
	upWG.Wait()
	faulted := fault.converge(t, 5*time.Minute)
	record(t, drill, "kill_handovers", kills)
	record(t, drill, "faulted", faulted)
	record(t, drill, "faulted_over_baseline_seconds_ratio", faulted.Seconds/baseline.Seconds)
	for _, h := range kills {
		assert.LessOrEqual(t, h.Seconds, killHandoverBound.Seconds(), "%s handover after SIGKILL", h.Component)
	}
	record(t, drill, "kill_handovers_within_17s_goal", withinGoal(kills, killHandoverGoal))
	for _, o := range []outcome{baseline, faulted} {
		assert.Equal(t, *burstTasks, o.TaskPhases["Succeeded"], "every task Succeeded")
		assert.Equal(t, *burstWorkflows, o.WorkflowPhases["Succeeded"], "every workflow Succeeded")
		assert.Zero(t, o.JobsPerTaskOver1+o.TasksWithoutJob+o.StepTasksOver1, "no duplicate or missing Job or step task")
		assert.Equal(t, o.Webhooks.Expected, o.Webhooks.Delivered, "every webhook delivered")
		assert.Zero(t, o.Webhooks.DistinctKeysOver+o.Webhooks.EmptyKey, "repeats carry the same Idempotency-Key")
	}

	// Graceful: a fresh standby for the killed components, then SIGTERM.
	addReplica(t, "tasks", "c")
	addReplica(t, "workflows", "c")
	var graceful []handover
	for _, comp := range []string{"deployments", "tasks", "workflows"} {
		h := signalLeader(t, comp, leader(t, comp), syscall.SIGTERM)
		graceful = append(graceful, h)
		assert.LessOrEqual(t, h.Seconds, gracefulHandoverBound.Seconds(), "%s handover after SIGTERM", comp)
	}
	record(t, drill, "graceful_handovers", graceful)
	record(t, drill, "graceful_handovers_within_3s_goal", withinGoal(graceful, gracefulHandoverGoal))
}

// withinGoal tells, per component, whether its handover met goal.
func withinGoal(hs []handover, goal time.Duration) map[string]bool {
	out := make(map[string]bool, len(hs))
	for _, h := range hs {
		out[h.Component] = h.Seconds <= goal.Seconds()
	}
	return out
}
