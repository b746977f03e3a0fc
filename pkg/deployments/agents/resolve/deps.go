package resolve

import (
	"fmt"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/conditions"
)

// state is how one required dependency stands, worst first.
type state int

const (
	stateMissing state = iota
	stateOutOfRange
	stateNotReady
	stateMet
)

var stateReasons = map[state]string{
	stateMissing:    ReasonDependencyMissing,
	stateOutOfRange: ReasonDependencyVersionOutOfRange,
	stateNotReady:   ReasonDependencyNotReady,
}

// Dependencies resolves agent's dependencies against peers, the Agents of
// its namespace (which may include agent itself). It reads only its
// arguments, and the same input gives the same Result.
func Dependencies(agent *ossav1.Agent, peers []*ossav1.Agent) Result {
	if agent == nil || agent.Spec.Agent.Dependencies == nil {
		return Result{Ready: true, Reason: ReasonResolved, Message: "no required dependencies"}
	}
	deps := agent.Spec.Agent.Dependencies
	idx := newIndex(peers)
	res := Result{Cycle: findCycle(agent, idx)}
	waiting := map[state][]string{}
	// status.dependencies is a map keyed by agentId: an id listed twice
	// (required and optional) is shown once, as required.
	listed := map[string]bool{}
	for _, d := range deps.Required {
		rd, st := resolveRequired(idx, agent, d)
		if st != stateMet {
			waiting[st] = append(waiting[st], rd.Message)
		}
		if len(res.Cycle) > 1 && d.AgentID == res.Cycle[1] {
			rd.Message = conditions.Truncate(join(rd.Message, "in "+cycleText(res.Cycle)), MaxMessageBytes)
		}
		if !listed[d.AgentID] {
			listed[d.AgentID] = true
			res.Dependencies = append(res.Dependencies, rd)
		}
	}
	for _, d := range deps.Optional {
		if !listed[d.AgentID] {
			listed[d.AgentID] = true
			res.Dependencies = append(res.Dependencies, resolveOptional(idx, agent, d))
		}
	}
	if len(res.Dependencies) > MaxDependencies {
		res.Dependencies = res.Dependencies[:MaxDependencies]
	}
	res.Ready, res.Reason, res.Message = summarize(res.Cycle, waiting, deps.Required)
	return res
}

func resolveRequired(idx index, agent *ossav1.Agent, d ossav1.RequiredDependency) (ossav1.ResolvedDependency, state) {
	rd := ossav1.ResolvedDependency{AgentID: d.AgentID}
	c, ok := choose(idx, agent, d.AgentID, &versionRange{min: d.MinVersion, max: d.MaxVersion})
	if !ok {
		rd.Message = fmt.Sprintf("required agent %q not found in namespace", d.AgentID)
		return rd, stateMissing
	}
	rd.Agent, rd.Version, rd.Ready = c.peer.Name, conditions.Truncate(c.peer.Spec.Agent.Version, 256), c.score() == 2
	switch {
	case !c.inRange:
		rd.Message = conditions.Truncate(c.outside, MaxMessageBytes)
		return rd, stateOutOfRange
	case !c.ready:
		rd.Message = conditions.Truncate(fmt.Sprintf("waiting for required agent %q (not ready: %s)", d.AgentID, c.notReady), MaxMessageBytes)
		return rd, stateNotReady
	}
	return rd, stateMet
}

func resolveOptional(idx index, agent *ossav1.Agent, d ossav1.OptionalDependency) ossav1.ResolvedDependency {
	rd := ossav1.ResolvedDependency{AgentID: d.AgentID, Optional: true}
	fallback := "going on without it"
	if d.Fallback != "" {
		fallback = "fallback: " + d.Fallback
	}
	c, ok := choose(idx, agent, d.AgentID, nil)
	switch {
	case !ok:
		rd.Message = fmt.Sprintf("optional agent %q not found in namespace; %s", d.AgentID, fallback)
	case !c.ready:
		rd.Message = fmt.Sprintf("optional agent %q not ready (%s); %s", d.AgentID, c.notReady, fallback)
	}
	if ok {
		rd.Agent, rd.Version, rd.Ready = c.peer.Name, conditions.Truncate(c.peer.Spec.Agent.Version, 256), c.ready
	}
	rd.Message = conditions.Truncate(rd.Message, MaxMessageBytes)
	return rd
}
