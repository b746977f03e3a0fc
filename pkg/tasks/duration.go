package tasks

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ranFor is status.duration of a task that ended at end: how long its agent
// ran since start, as a Workflow's duration is written ("1m30s"); empty when
// the agent never started. The two times come from different clocks (the
// kubelet's start, the Job controller's or the agent's end), so it is never
// negative.
func ranFor(start, end *metav1.Time) string {
	if start == nil || end == nil {
		return ""
	}
	return max(0, end.Sub(start.Time)).String()
}
