package bench

import (
	"context"
	"fmt"
	"slices"
)

// HopPair is one repetition of the hop scenario at one size: the workflows
// (managed), the harness's AgentTask chains (baseline, ChainHops) and the
// floor chains of plain Jobs (Floor, FloorChainHops), all of the same size.
type HopPair struct {
	Rep           int  `json:"rep"`
	Workflows     int  `json:"workflows"`
	BaselineFirst bool `json:"baselineFirst"`
	Managed       Hops `json:"managed"`
	Baseline      Hops `json:"baseline"`
	Floor         Hops `json:"floor"`
	// P99Ratio is the managed task-level hop p99 over the baseline's.
	P99Ratio float64 `json:"p99Ratio"`
	// PodP99ToFloor is the managed pod-level hop p99 over the floor's.
	PodP99ToFloor float64 `json:"podP99ToFloor"`
	// Writes are the workflows manager's requests during the managed run.
	Writes Writes `json:"writes"`
}

// HopSummary is the medians over one size's repetitions, in milliseconds.
type HopSummary struct {
	Workflows int `json:"workflows"`
	// TaskP99, BaselineTaskP99 and TaskP99Ratio: the task-level hop of the
	// workflows and of the AgentTask chains, and their ratio.
	TaskP99         float64 `json:"taskP99Ms"`
	BaselineTaskP99 float64 `json:"baselineTaskP99Ms"`
	TaskP99Ratio    float64 `json:"taskP99Ratio"`
	// Pod-level hops of the workflows, the AgentTask chains and the floor chains.
	PodP50         float64 `json:"podP50Ms"`
	PodP99         float64 `json:"podP99Ms"`
	BaselinePodP50 float64 `json:"baselinePodP50Ms"`
	BaselinePodP99 float64 `json:"baselinePodP99Ms"`
	FloorPodP50    float64 `json:"floorPodP50Ms"`
	FloorPodP99    float64 `json:"floorPodP99Ms"`
	// PodP99ToFloor is the median of the repetitions' managed/floor pod-level p99.
	PodP99ToFloor float64 `json:"podP99ToFloor"`
}

// runHops runs the hop scenario cfg.Repeats times at each of
// cfg.HopWorkflows, the three sides in alternating order (rep 0 floor,
// baseline, managed; rep 1 the reverse), and records the medians per size.
func runHops(ctx context.Context, e *Env, cfg Config, base string, rep *Report) error {
	for _, w := range cfg.HopWorkflows {
		var pairs []HopPair
		for i := range cfg.Repeats {
			p := HopPair{Rep: i, Workflows: w, BaselineFirst: i%2 == 0}
			run := fmt.Sprintf("%sh%dx%d", base, w, i)
			if err := runHopPair(ctx, e, cfg, run, &p); err != nil {
				return err
			}
			pairs = append(pairs, p)
		}
		rep.Hops = append(rep.Hops, pairs...)
		rep.HopSummaries = append(rep.HopSummaries, summarizeHops(w, pairs))
	}
	return nil
}

func runHopPair(ctx context.Context, e *Env, cfg Config, run string, p *HopPair) error {
	w := p.Workflows
	prof := profiler{e: e, window: cfg.Profile, dir: cfg.ProfileDir}
	baseline := func() (err error) {
		if p.Baseline, err = ChainHops(ctx, e, run+"c", w, cfg.Workers, cfg.Timeout); err != nil {
			return fmt.Errorf("hop baseline: %w", err)
		}
		return nil
	}
	floor := func() (err error) {
		if p.Floor, err = prof.measureHops(ctx, run+"-floor", func() (Hops, error) {
			return FloorChainHops(ctx, e, run+"f", w, cfg.Workers, cfg.Timeout)
		}); err != nil {
			return fmt.Errorf("hop floor: %w", err)
		}
		return nil
	}
	managed := func() error {
		before, err := RestCounts(ctx, e.Managers["workflows"])
		if err != nil {
			return err
		}
		if p.Managed, err = prof.measureHops(ctx, run+"-managed", func() (Hops, error) {
			return WorkflowHops(ctx, e, run+"w", w, cfg.Workers, cfg.Timeout)
		}); err != nil {
			return err
		}
		after, err := RestCounts(ctx, e.Managers["workflows"])
		d := diff(after, before)
		p.Writes = Writes{Manager: "workflows", Methods: d, Writes: writes(d), PerUnit: ratio(writes(d), float64(w)), Unit: "workflow"}
		return err
	}
	steps := []func() error{managed, baseline, floor}
	if p.BaselineFirst {
		slices.Reverse(steps)
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	p.P99Ratio = ratio(p.Managed.Hop.P99Ms, p.Baseline.Hop.P99Ms)
	p.PodP99ToFloor = ratio(p.Managed.PodHop.P99Ms, p.Floor.PodHop.P99Ms)
	return nil
}

// summarizeHops is the medians over the repetitions pairs of size w.
func summarizeHops(w int, pairs []HopPair) HopSummary {
	med := func(f func(HopPair) float64) float64 {
		xs := make([]float64, 0, len(pairs))
		for _, p := range pairs {
			xs = append(xs, f(p))
		}
		return Median(xs)
	}
	return HopSummary{
		Workflows:       w,
		TaskP99:         med(func(p HopPair) float64 { return p.Managed.Hop.P99Ms }),
		BaselineTaskP99: med(func(p HopPair) float64 { return p.Baseline.Hop.P99Ms }),
		TaskP99Ratio:    med(func(p HopPair) float64 { return p.P99Ratio }),
		PodP50:          med(func(p HopPair) float64 { return p.Managed.PodHop.P50Ms }),
		PodP99:          med(func(p HopPair) float64 { return p.Managed.PodHop.P99Ms }),
		BaselinePodP50:  med(func(p HopPair) float64 { return p.Baseline.PodHop.P50Ms }),
		BaselinePodP99:  med(func(p HopPair) float64 { return p.Baseline.PodHop.P99Ms }),
		FloorPodP50:     med(func(p HopPair) float64 { return p.Floor.PodHop.P50Ms }),
		FloorPodP99:     med(func(p HopPair) float64 { return p.Floor.PodHop.P99Ms }),
		PodP99ToFloor:   med(func(p HopPair) float64 { return p.PodP99ToFloor }),
	}
}
