package bench

import (
	"fmt"
	"maps"
	"slices"
)

// printWrites writes the writes scenario: each manager's writes per
// workflow, then every kind of request, the writes on other objects in the
// same window and the metrics' cross-check.
func printWrites(line func(string, ...any), w *WriteRun) {
	if w == nil {
		return
	}
	line("WRITES (%d one-step Workflows → Succeeded; source %s)\tper workflow\tcount\t", w.Workflows, w.Source)
	line("  workflow create→Succeeded p50/p99 ms, wall s\t%s\t%.2f\t", p50p99(w.Duration), w.WallSeconds)
	if w.Fallback != "" {
		line("  fallback: %s\t\t\t\t", w.Fallback)
	}
	for _, m := range slices.Sorted(maps.Keys(w.PerWorkflow)) {
		line("  %s manager, all writes on the run's objects\t%.2f\t%.0f\t", m, w.PerWorkflow[m], w.PerWorkflow[m]*float64(w.Workflows))
		for _, c := range w.Requests {
			if c.Manager == m {
				line("    %s\t%.2f\t%d\t", requestName(c), c.PerUnit, c.Count)
			}
		}
	}
	for _, c := range w.Other {
		line("  other objects: %s %s\t%.2f\t%d\t", c.Manager, requestName(c), c.PerUnit, c.Count)
	}
	for _, r := range w.Rest {
		line("  cross-check: %s rest_client_requests_total, writes (other objects included)\t%.2f\t%.0f\t%s", r.Manager, r.PerUnit, r.Writes, methods(r.Methods))
	}
}

// requestName is "verb resource", with the response code unless it is 2xx.
func requestName(c AuditCount) string {
	if c.Code >= 200 && c.Code < 300 {
		return c.Verb + " " + c.Resource
	}
	return fmt.Sprintf("%s %s → %d", c.Verb, c.Resource, c.Code)
}
