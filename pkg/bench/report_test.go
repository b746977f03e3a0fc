package bench

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrintTable(t *testing.T) {
	match := true
	rep := &Report{
		Config: Config{Tasks: 2, PodDelay: time.Second, Settle: time.Second},
		Throughput: []Pair{{
			BaselineFirst:  true,
			Managed:        Throughput{Kind: "AgentTask", N: 2, WallSeconds: 2.2, PerSecond: 0.9, CreateToDone: Dist{N: 2, P50Ms: 1000, P99Ms: 2000}, CreateToPodDone: Dist{N: 2, P50Ms: 950, P99Ms: 1950}},
			Baseline:       Throughput{Kind: "Job", N: 2, WallSeconds: 2, PerSecond: 1},
			WallRatio:      1.1,
			TaskWrites:     map[string]float64{"POST": 2, "PATCH": 6},
			Floor:          &Throughput{Kind: "AgentTask floor", N: 2, WallSeconds: 2.1, CreateToDone: Dist{N: 2, P50Ms: 900, P99Ms: 1900}},
			FloorRatio:     1.05,
			ManagedToFloor: 1.048,
		}},
		WallRatioMedian:      1.1,
		FloorRatioMedian:     1.05,
		ManagedToFloorMedian: 1.048,
		PodSpecMatch:         &match,
		Hops: []HopPair{{
			Workflows:     1,
			BaselineFirst: true,
			Managed:       Hops{Workflows: 1, Steps: 5, Hop: Dist{N: 4, P50Ms: 5, P99Ms: 90}, PodHop: Dist{N: 4, P50Ms: 210, P90Ms: 400, P99Ms: 640, MaxMs: 640}},
			Baseline:      Hops{Workflows: 1, Steps: 5, Hop: Dist{N: 4, P50Ms: 4, P99Ms: 80}, PodHop: Dist{N: 4, P50Ms: 1130, P99Ms: 1700}},
			Floor:         Hops{Workflows: 1, Steps: 5, PodHop: Dist{N: 4, P50Ms: 150, P99Ms: 500}},
			P99Ratio:      1.125,
			PodP99ToFloor: 1.28,
			Writes:        Writes{Methods: map[string]float64{"PATCH": 6, "POST": 6}, PerUnit: 12},
		}},
		HopSummaries: []HopSummary{{Workflows: 1, TaskP99: 90, BaselineTaskP99: 80, TaskP99Ratio: 1.125, PodP50: 210, PodP99: 640,
			BaselinePodP50: 1130, BaselinePodP99: 1700, FloorPodP50: 150, FloorPodP99: 500, PodP99ToFloor: 1.28}},
		Writes: &WriteRun{Workflows: 2, Source: "audit", PerWorkflow: map[string]float64{"tasks": 3.5, "workflows": 2, "deployments": 0},
			Requests: []AuditCount{
				{Manager: "tasks", Verb: "create", Resource: "events.events.k8s.io", Code: 201, Count: 2, PerUnit: 1},
				{Manager: "tasks", Verb: "patch", Resource: "agenttasks/status.scheduler.opsnorth.io", Code: 409, Count: 1, PerUnit: 0.5},
			},
			Rest: []Writes{{Manager: "tasks", Methods: map[string]float64{"POST": 4, "PATCH": 3}, Writes: 7, PerUnit: 3.5}}},
		Restart: []Writes{{Manager: "tasks-restart-1", Methods: map[string]float64{"GET": 3}}},
		Memory:  []Memory{{Process: "tasks", PeakMiB: 40, RSSMiB: 39}},
	}
	var out bytes.Buffer
	require.NoError(t, PrintTable(&out, rep))
	for _, want := range []string{"1000 / 2000", "950 / 1950", "PATCH=6 POST=2", "median wall ratio (goal ≤ 1.10)", "tasks-restart-1", "40.0", "harness creates task k+1", "90.0, 80.0, 1.12", "PATCH=6 POST=6",
		"AgentTask floor", "900 / 1900", "1.050, 1.048", "the least ratio a controller can reach", "median managed/floor (goal ≤ 1.20)",
		"WORKFLOW HOP (1 × 5 steps)", "harness creates Job k+1 on pod k Succeeded", "210 / 640", "400 / 640", "1130 / 1700", "1.28",
		"median pod hop p50 ms (goal ≤ 250), p99 ms (goal ≤ 700)", "1130 / 1700, 150 / 500",
		"WRITES (2 one-step Workflows → Succeeded; source audit)", "create events.events.k8s.io", "patch agenttasks/status.scheduler.opsnorth.io → 409", "3.50", "POST=4"} {
		assert.Contains(t, out.String(), want)
	}
	// The JSON of a report round-trips, so runs can be compared later.
	data, err := json.Marshal(rep)
	require.NoError(t, err)
	var back Report
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, rep.Throughput, back.Throughput)
	assert.Equal(t, rep.Hops, back.Hops)
	assert.Equal(t, rep.Writes, back.Writes)
}
