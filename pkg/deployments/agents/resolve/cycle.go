package resolve

import (
	"slices"
	"strings"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
)

// findCycle returns the shortest cycle of required dependencies from agent
// back to its id, first id repeated last ([a b a]), or nil. Ids are the
// nodes; an id's edges are the required dependencies of every Agent with
// it. A breadth-first search expands each id once, so the work is bounded
// by the Agents and their dependencies, whatever the graph.
func findCycle(agent *ossav1.Agent, idx index) []string {
	target := agent.Spec.Agent.ID
	parent := make(map[string]string, len(idx))
	queue := make([]string, 0, len(idx))
	visit := func(from, id string) {
		if _, seen := parent[id]; !seen {
			parent[id] = from
			queue = append(queue, id)
		}
	}
	for _, d := range required(agent) {
		if d.AgentID == target {
			return []string{target, target}
		}
		visit(target, d.AgentID)
	}
	for i := 0; i < len(queue); i++ {
		id := queue[i]
		for _, p := range idx[id] {
			for _, d := range required(p) {
				if d.AgentID == target {
					return cyclePath(parent, id, target)
				}
				visit(id, d.AgentID)
			}
		}
	}
	return nil
}

// cyclePath walks back from last to target through parent.
func cyclePath(parent map[string]string, last, target string) []string {
	path := []string{target}
	for id := last; id != target; id = parent[id] {
		path = append(path, id)
	}
	path = append(path, target)
	slices.Reverse(path)
	return path
}

func cycleText(cycle []string) string {
	return "dependency cycle: " + strings.Join(cycle, " -> ")
}
