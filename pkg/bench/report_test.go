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
			Managed:        Throughput{Kind: "AgentTask", N: 2, WallSeconds: 2.2, PerSecond: 0.9, CreateToDone: Dist{N: 2, P50Ms: 1000, P99Ms: 2000}},
			Baseline:       Throughput{Kind: "Job", N: 2, WallSeconds: 2, PerSecond: 1},
			WallRatio:      1.1,
			TaskWrites:     map[string]float64{"POST": 2, "PATCH": 6},
			Floor:          &Throughput{Kind: "AgentTask floor", N: 2, WallSeconds: 2.1, CreateToDone: Dist{N: 2, P50Ms: 900, P99Ms: 1900}},
			FloorRatio:     1.05,
			ManagedToFloor: 1.048,
		}},
		WallRatioMedian:  1.1,
		FloorRatioMedian: 1.05,
		PodSpecMatch:     &match,
		Hops: []HopPair{{
			BaselineFirst: true,
			Managed:       Hops{Workflows: 1, Steps: 5, Hop: Dist{N: 4, P50Ms: 5, P99Ms: 90}},
			Baseline:      Hops{Workflows: 1, Steps: 5, Hop: Dist{N: 4, P50Ms: 4, P99Ms: 80}},
			P99Ratio:      1.125,
			Writes:        Writes{Methods: map[string]float64{"PATCH": 6, "POST": 6}, PerUnit: 12},
		}},
		HopP99Median:         90,
		HopBaselineP99Median: 80,
		HopP99RatioMedian:    1.125,
		Restart:              []Writes{{Manager: "tasks-restart-1", Methods: map[string]float64{"GET": 3}}},
		Memory:               []Memory{{Process: "tasks", PeakMiB: 40, RSSMiB: 39}},
	}
	var out bytes.Buffer
	require.NoError(t, PrintTable(&out, rep))
	for _, want := range []string{"1000 / 2000", "PATCH=6 POST=2", "median wall ratio (goal ≤ 1.10)", "tasks-restart-1", "40.0", "the harness creates step k+1", "1.25", "90.0, 80.0, 1.12", "PATCH=6 POST=6",
		"AgentTask floor", "900 / 1900", "1.050, 1.048", "the least ratio a controller can reach"} {
		assert.Contains(t, out.String(), want)
	}
	// The JSON of a report round-trips, so runs can be compared later.
	data, err := json.Marshal(rep)
	require.NoError(t, err)
	var back Report
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, rep.Throughput, back.Throughput)
}
