package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSummarizeHops(t *testing.T) {
	pair := func(task, pod, floor float64) HopPair {
		return HopPair{
			Workflows:     20,
			Managed:       Hops{Hop: Dist{P99Ms: task}, PodHop: Dist{P50Ms: pod / 2, P99Ms: pod}},
			Baseline:      Hops{Hop: Dist{P99Ms: task / 2}, PodHop: Dist{P50Ms: 1100, P99Ms: 1800}},
			Floor:         Hops{PodHop: Dist{P50Ms: floor / 2, P99Ms: floor}},
			P99Ratio:      2,
			PodP99ToFloor: pod / floor,
		}
	}
	got := summarizeHops(20, []HopPair{pair(100, 600, 500), pair(80, 900, 450), pair(120, 650, 520)})
	assert.Equal(t, HopSummary{
		Workflows: 20, TaskP99: 100, BaselineTaskP99: 50, TaskP99Ratio: 2,
		PodP50: 325, PodP99: 650, BaselinePodP50: 1100, BaselinePodP99: 1800,
		FloorPodP50: 250, FloorPodP99: 500, PodP99ToFloor: 1.25,
	}, got, "each figure is its own median over the repetitions; the ratio is the median of the ratios")
	assert.Equal(t, HopSummary{Workflows: 5}, summarizeHops(5, nil))
}
