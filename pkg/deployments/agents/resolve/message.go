package resolve

import (
	"strings"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/conditions"
)

// summarize gives the condition: the worst reason, and a message naming
// what is waited for, worst first, each kind in spec order.
func summarize(cycle []string, waiting map[state][]string, reqs []ossav1.RequiredDependency) (bool, string, string) {
	var parts []string
	reason := ""
	if cycle != nil {
		parts, reason = append(parts, cycleText(cycle)), ReasonDependencyCycle
	}
	for _, st := range []state{stateMissing, stateOutOfRange, stateNotReady} {
		if len(waiting[st]) > 0 && reason == "" {
			reason = stateReasons[st]
		}
		parts = append(parts, waiting[st]...)
	}
	if reason != "" {
		return false, reason, conditions.Truncate(strings.Join(parts, "; "), MaxMessageBytes)
	}
	if len(reqs) == 0 {
		return true, ReasonResolved, "no required dependencies"
	}
	ids := make([]string, len(reqs))
	for i, d := range reqs {
		ids[i] = d.AgentID
	}
	return true, ReasonResolved, conditions.Truncate("all required agents are ready: "+strings.Join(ids, ", "), MaxMessageBytes)
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
