// Package bench measures the scheduler's managers on the local cluster, each
// figure side by side with a baseline run in the same cluster: AgentTask
// throughput against plain Jobs, workflow step hops, API writes per object
// lifecycle and after a restart, and the managers' peak memory.
package bench

import (
	"slices"
	"time"
)

// Dist summarises a sample of durations in milliseconds.
type Dist struct {
	N     int     `json:"n"`
	P50Ms float64 `json:"p50Ms"`
	P90Ms float64 `json:"p90Ms"`
	P99Ms float64 `json:"p99Ms"`
	MaxMs float64 `json:"maxMs"`
}

// Summarize returns the distribution of ds (nearest-rank percentiles).
func Summarize(ds []time.Duration) Dist {
	if len(ds) == 0 {
		return Dist{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return Dist{
		N:     len(s),
		P50Ms: ms(percentile(s, 50)),
		P90Ms: ms(percentile(s, 90)),
		P99Ms: ms(percentile(s, 99)),
		MaxMs: ms(s[len(s)-1]),
	}
}

// percentile returns the nearest-rank p-th percentile of sorted s.
func percentile(s []time.Duration, p int) time.Duration {
	rank := (p*len(s) + 99) / 100
	if rank < 1 {
		rank = 1
	}
	return s[rank-1]
}

// Median returns the median of xs, or 0 when empty.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// ratio returns a/b, or 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
