package bench

import "fmt"

// printHops writes the hop scenario's rows: per size, each repetition's
// three sides and ratios, then the medians against the goals.
func printHops(line func(string, ...any), rep *Report) {
	for _, sum := range rep.HopSummaries {
		line("WORKFLOW HOP (%d × %d steps)\trep\torder\ttask hop p50/p99 ms\tpod hop p50/p99 ms\tpod hop p90/max ms\twall s\tworkflow p50/p99 ms", sum.Workflows, StepsPerWorkflow)
		for _, p := range rep.Hops {
			if p.Workflows != sum.Workflows {
				continue
			}
			order := hopOrder(p.BaselineFirst)
			for _, side := range []struct {
				name string
				h    Hops
			}{
				{"floor: Job chain, harness creates Job k+1 on pod k Succeeded", p.Floor},
				{"baseline: AgentTask chain, harness creates task k+1 on task k Succeeded", p.Baseline},
				{"managed: Workflows", p.Managed},
			} {
				h := side.h
				line("  %s\t%d\t%s\t%s\t%s\t%s\t%.2f\t%s", side.name, p.Rep, order, p50p99(h.Hop), p50p99(h.PodHop), p90max(h.PodHop), h.WallSeconds, p50p99(h.Duration))
			}
			line("  ratio managed/baseline (task p99), managed/floor (pod p99)\t%d\t%s\t%.2f\t%.2f\t\t\t\t", p.Rep, order, p.P99Ratio, p.PodP99ToFloor)
			line("  workflows manager writes per workflow\t%d\t%s\t%.2f\t%s\t\t\t\t", p.Rep, order, p.Writes.PerUnit, methods(p.Writes.Methods))
		}
		line("  median pod hop p50 ms (goal ≤ 250), p99 ms (goal ≤ 700)\t\t\t\t%.0f / %.0f", sum.PodP50, sum.PodP99)
		line("  median pod hop p50 / p99 ms: baseline, floor\t\t\t\t%.0f / %.0f, %.0f / %.0f", sum.BaselinePodP50, sum.BaselinePodP99, sum.FloorPodP50, sum.FloorPodP99)
		line("  median pod hop p99 managed/floor (goal ≤ 1.30)\t\t\t\t%.2f", sum.PodP99ToFloor)
		line("  median task hop p99 ms managed, baseline (goal < 100), ratio\t\t\t\t%.1f, %.1f, %.2f", sum.TaskP99, sum.BaselineTaskP99, sum.TaskP99Ratio)
	}
}

func p90max(d Dist) string {
	if d.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f / %.0f", d.P90Ms, d.MaxMs)
}

func hopOrder(baselineFirst bool) string {
	if baselineFirst {
		return "floor first"
	}
	return "managed first"
}
