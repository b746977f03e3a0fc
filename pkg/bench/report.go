package bench

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// PrintTable writes rep as aligned tables.
func PrintTable(w io.Writer, rep *Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	line := func(format string, args ...any) { _, _ = fmt.Fprintf(tw, format+"\n", args...) }
	if len(rep.Throughput) > 0 {
		line("THROUGHPUT (N=%d, pod delay %s)\trep\torder\twall s\tper s\tcreate→running p50/p99 ms\tcreate→pod running p50/p99 ms\tcreate→pod done p50/p99 ms\tcreate→done p50/p99 ms\tpod done→done p50/p99 ms\twrites/task", rep.Config.Tasks, rep.Config.PodDelay)
		for _, p := range rep.Throughput {
			order := orderOf(p.BaselineFirst)
			runs := []Throughput{p.Baseline, p.Managed}
			if p.Floor != nil {
				runs = []Throughput{p.Baseline, *p.Floor, p.Managed}
			}
			for _, t := range runs {
				per := "-"
				if t.Kind == "AgentTask" {
					per = fmt.Sprintf("%.2f", p.TaskWritesPerObj)
				}
				line("  %s\t%d\t%s\t%.2f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s", t.Kind, p.Rep, order, t.WallSeconds, t.PerSecond,
					p50p99(t.CreateToRunning), p50p99(t.CreateToPodRunning), p50p99(t.CreateToPodDone), p50p99(t.CreateToDone), p50p99(t.PodDoneToDone), per)
			}
			line("  wall ratio managed/baseline\t%d\t%s\t%.3f\t\t\t\t\t\t\t%s", p.Rep, order, p.WallRatio, methods(p.TaskWrites))
			line("  CPU s baseline → managed\t%d\t%s\t\t\t\t\t\t\t\t%s", p.Rep, order, cpuPairs(p.Baseline.CPUSeconds, p.Managed.CPUSeconds))
			if p.Floor != nil {
				line("  wall ratio floor/baseline, managed/floor\t%d\t%s\t%.3f, %.3f\t\t\t\t\t\t\t", p.Rep, order, p.FloorRatio, p.ManagedToFloor)
				line("  CPU s baseline → floor\t%d\t%s\t\t\t\t\t\t\t\t%s", p.Rep, order, cpuPairs(p.Baseline.CPUSeconds, p.Floor.CPUSeconds))
			}
		}
		line("  median wall ratio (goal ≤ 1.10)\t\t\t%.3f\t\t\t\t\t\t\t", rep.WallRatioMedian)
		if rep.FloorRatioMedian > 0 {
			line("  median floor/baseline: the least ratio a controller can reach\t\t\t%.3f\t\t\t\t\t\t\t", rep.FloorRatioMedian)
			line("  median managed/floor (goal ≤ 1.20)\t\t\t%.3f\t\t\t\t\t\t\t", rep.ManagedToFloorMedian)
		}
		if rep.PodSpecMatch != nil {
			line("  same pod spec as the manager's Job\t\t\t%t\t\t\t\t\t\t\t", *rep.PodSpecMatch)
		}
		_ = tw.Flush()
	}
	printHops(line, rep)
	_ = tw.Flush()
	printWrites(line, rep.Writes)
	_ = tw.Flush()
	if d := rep.Deployments; d != nil {
		line("DEPLOYMENTS (%d to Ready)\twall s\tbaseline wall s\tratio (goal ≤ 1.5)\tcreate→Ready p50/p99 ms\twrites per UserDeployment\tchildren applied by the baseline", d.N)
		line("  UserDeployment vs kubectl apply --server-side\t%.2f\t%.2f\t%.3f\t%s\t%.2f (%s)\t%s", d.WallSeconds, d.BaselineWallSeconds, d.WallRatio, p50p99(d.CreateToDone), d.Writes.PerUnit, methods(d.Writes.Methods), counts(d.Children))
		_ = tw.Flush()
	}
	if len(rep.Restart) > 0 {
		line("RESTART OVER CONVERGED STATE (settle %s)\twrites (goal 0)\trequests by method", rep.Config.Settle)
		for _, r := range rep.Restart {
			line("  %s\t%.0f\t%s", r.Manager, r.Writes, methods(r.Methods))
		}
		_ = tw.Flush()
	}
	if len(rep.Memory) > 0 {
		line("MEMORY\tpeak MiB (VmHWM)\tRSS MiB\tCPU s")
		for _, m := range rep.Memory {
			line("  %s\t%.1f\t%.1f\t%.1f", m.Process, m.PeakMiB, m.RSSMiB, m.CPUSeconds)
		}
	}
	return tw.Flush()
}

func p50p99(d Dist) string {
	if d.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f / %.0f", d.P50Ms, d.P99Ms)
}

func methods(m map[string]float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%.0f", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func counts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

// cpuPairs lists "process baseline→managed" CPU seconds, busiest first.
func cpuPairs(baseline, managed map[string]float64) string {
	names := slices.Collect(maps.Keys(managed))
	for n := range baseline {
		if _, ok := managed[n]; !ok {
			names = append(names, n)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(managed[b]+baseline[b], managed[a]+baseline[a]) })
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.1f→%.1f", n, baseline[n], managed[n]))
	}
	return strings.Join(parts, ", ")
}

func orderOf(baselineFirst bool) string {
	if baselineFirst {
		return "baseline first"
	}
	return "managed first"
}
