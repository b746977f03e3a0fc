//go:build bench

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"opsnorth.io/scheduler/pkg/bench"
)

// TestTinyRun runs every scenario end to end on a tiny load, so the harness
// keeps working: `go test -tags bench ./scripts/bench/... -count=1`.
func TestTinyRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "bench.json")
	o := options{Out: out, Config: bench.Config{
		Tasks: 20, HopWorkflows: []int{2, 3}, WriteWorkflows: 3, Deployments: 3, Repeats: 2, Workers: 8, MemoryTasks: 10, Floor: true,
		Scenarios: bench.Scenarios, PodDelay: time.Second, Settle: 3 * time.Second, Timeout: 3 * time.Minute,
	}}
	var table bytes.Buffer
	rep, err := run(t.Context(), o, &table)
	t.Log("\n" + table.String())
	require.NoError(t, err)

	require.Len(t, rep.Throughput, 2)
	assert.True(t, rep.Throughput[0].BaselineFirst)
	assert.False(t, rep.Throughput[1].BaselineFirst, "the order alternates")
	for _, p := range rep.Throughput {
		require.NotNil(t, p.Floor, "every repetition runs the floor")
		for _, tp := range []bench.Throughput{p.Managed, p.Baseline, *p.Floor} {
			assert.Equal(t, 20, tp.N)
			assert.Equal(t, 20, tp.CreateToDone.N, "%s: every object seen done", tp.Kind)
			assert.Equal(t, 20, tp.CreateToPodRunning.N, "%s: every pod seen running", tp.Kind)
			assert.Equal(t, 20, tp.CreateToPodDone.N, "%s: every pod seen Succeeded", tp.Kind)
			assert.Positive(t, tp.WallSeconds)
		}
		assert.Positive(t, p.WallRatio)
		assert.Positive(t, p.FloorRatio)
		assert.Positive(t, p.ManagedToFloor)
		assert.Positive(t, p.TaskWrites["POST"], "the tasks manager's Job creates are counted")
	}
	assert.Positive(t, rep.FloorRatioMedian)
	assert.Positive(t, rep.ManagedToFloorMedian)
	require.NotNil(t, rep.PodSpecMatch)
	assert.True(t, *rep.PodSpecMatch, "the baseline Jobs run the manager's pod spec")

	require.Len(t, rep.Hops, 4, "each hop size repeats as often as the throughput")
	for i, p := range rep.Hops {
		w := []int{2, 2, 3, 3}[i]
		assert.Equal(t, w, p.Workflows)
		assert.Equal(t, i%2 == 0, p.BaselineFirst, "the order alternates")
		for _, h := range []bench.Hops{p.Managed, p.Baseline} {
			assert.Equal(t, w*(bench.StepsPerWorkflow-1), h.Hop.N, "every task hop of every workflow measured")
		}
		for _, h := range []bench.Hops{p.Managed, p.Baseline, p.Floor} {
			assert.Equal(t, w*(bench.StepsPerWorkflow-1), h.PodHop.N, "every pod hop measured")
			assert.Positive(t, h.PodHop.P50Ms)
			assert.Equal(t, w, h.Duration.N)
		}
		assert.Zero(t, p.Floor.Hop.N, "the floor chain has no AgentTask")
		assert.Positive(t, p.P99Ratio)
		assert.Positive(t, p.PodP99ToFloor)
		assert.Positive(t, p.Writes.Writes)
	}
	require.Len(t, rep.HopSummaries, 2)
	for _, s := range rep.HopSummaries {
		assert.Positive(t, s.PodP99)
		assert.Positive(t, s.FloorPodP99)
		assert.Positive(t, s.PodP99ToFloor)
		assert.Positive(t, s.TaskP99Ratio)
	}

	require.NotNil(t, rep.Writes)
	assert.Equal(t, "audit", rep.Writes.Source, "the bench cluster keeps an audit log")
	assert.Equal(t, 3, rep.Writes.Duration.N, "every workflow seen Succeeded")
	assert.Positive(t, rep.Writes.PerWorkflow["tasks"])
	assert.Positive(t, rep.Writes.PerWorkflow["workflows"])
	assert.Contains(t, rep.Writes.PerWorkflow, "deployments")
	assert.True(t, slices.ContainsFunc(rep.Writes.Requests, func(c bench.AuditCount) bool {
		return c.Manager == "tasks" && c.Verb == "create" && c.Resource == "jobs.batch" && c.Count == 3
	}), "one Job per task: %v", rep.Writes.Requests)
	assert.True(t, slices.ContainsFunc(rep.Writes.Requests, func(c bench.AuditCount) bool {
		return c.Manager == "workflows" && c.Verb == "create" && c.Resource == "agenttasks.scheduler.opsnorth.io" && c.Count == 3
	}), "one AgentTask per workflow: %v", rep.Writes.Requests)
	assert.Len(t, rep.Writes.Rest, 3)

	require.NotNil(t, rep.Deployments)
	assert.Equal(t, 3, rep.Deployments.CreateToDone.N, "every UserDeployment seen Ready")
	assert.Equal(t, 3, rep.Deployments.Children["Deployment"], "the baseline applies each app's Deployment")
	assert.Positive(t, rep.Deployments.BaselineWallSeconds)
	assert.Positive(t, rep.Deployments.Writes.Writes)

	assert.Len(t, rep.Restart, 3)
	for _, r := range rep.Restart {
		assert.Positive(t, r.Methods["GET"], "%s listed the cluster", r.Manager)
	}
	assert.Len(t, rep.Memory, 6, "each manager before and after its restart")
	for _, m := range rep.Memory {
		assert.Positive(t, m.PeakMiB, m.Process)
	}

	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var back bench.Report
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, rep.Config, back.Config)
}
