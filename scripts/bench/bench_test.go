//go:build bench

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
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
		Tasks: 20, Workflows: 2, Deployments: 3, Repeats: 2, Workers: 8, MemoryTasks: 10, Floor: true,
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
			assert.Positive(t, tp.WallSeconds)
		}
		assert.Positive(t, p.WallRatio)
		assert.Positive(t, p.FloorRatio)
		assert.Positive(t, p.ManagedToFloor)
		assert.Positive(t, p.TaskWrites["POST"], "the tasks manager's Job creates are counted")
	}
	assert.Positive(t, rep.FloorRatioMedian)
	require.NotNil(t, rep.PodSpecMatch)
	assert.True(t, *rep.PodSpecMatch, "the baseline Jobs run the manager's pod spec")

	require.Len(t, rep.Hops, 2, "the hop scenario repeats as often as the throughput")
	assert.True(t, rep.Hops[0].BaselineFirst)
	assert.False(t, rep.Hops[1].BaselineFirst, "the order alternates")
	for _, p := range rep.Hops {
		for _, h := range []bench.Hops{p.Managed, p.Baseline} {
			assert.Equal(t, 2*(bench.StepsPerWorkflow-1), h.Hop.N, "every hop of every workflow measured")
			assert.Equal(t, 2, h.Duration.N)
		}
		assert.Positive(t, p.P99Ratio)
		assert.Positive(t, p.Writes.Writes)
	}
	assert.Positive(t, rep.HopP99RatioMedian)

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
