package resolve

import (
	"cmp"
	"fmt"
	"slices"

	"golang.org/x/mod/semver"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
)

// index is the Agents of a namespace by OSSA id, each id's sorted by name.
type index map[string][]*ossav1.Agent

func newIndex(peers []*ossav1.Agent) index {
	idx := make(index, len(peers))
	for _, p := range peers {
		if p != nil {
			idx[p.Spec.Agent.ID] = append(idx[p.Spec.Agent.ID], p)
		}
	}
	for _, ps := range idx {
		if len(ps) > 1 {
			slices.SortFunc(ps, func(a, b *ossav1.Agent) int { return cmp.Compare(a.Name, b.Name) })
		}
	}
	return idx
}

// required is an Agent's required dependencies.
func required(a *ossav1.Agent) []ossav1.RequiredDependency {
	if a.Spec.Agent.Dependencies == nil {
		return nil
	}
	return a.Spec.Agent.Dependencies.Required
}

// peerReady says whether p is Ready for the spec it has now, and if not why.
func peerReady(p *ossav1.Agent) (bool, string) {
	switch {
	case p.DeletionTimestamp != nil:
		return false, "being deleted"
	case p.Status.Phase == "":
		return false, "no status yet"
	case p.Status.Phase != ossav1.AgentReady:
		return false, string(p.Status.Phase)
	case p.Status.ObservedGeneration != p.Generation:
		return false, fmt.Sprintf("generation %d not yet observed", p.Generation)
	}
	return true, ""
}

// candidate is one Agent that may meet a dependency.
type candidate struct {
	peer     *ossav1.Agent
	ready    bool
	notReady string // why not ready
	inRange  bool
	outside  string // why out of range
}

// score ranks candidates: one that meets the dependency, then one in range
// that is not ready yet, then one out of range.
func (c candidate) score() int {
	switch {
	case c.ready && c.inRange:
		return 2
	case c.inRange:
		return 1
	}
	return 0
}

// better says whether c is to be chosen over d: higher score, then higher
// version (an invalid one lowest), then lower name.
func (c candidate) better(d candidate) bool {
	if c.score() != d.score() {
		return c.score() > d.score()
	}
	cv, dv := canonical(c.peer.Spec.Agent.Version), canonical(d.peer.Spec.Agent.Version)
	if n := semver.Compare(cv, dv); n != 0 {
		return n > 0
	}
	return c.peer.Name < d.peer.Name
}

// choose evaluates the Agents with id other than self against r (nil for
// any version) and returns the best, or false if there is none.
func choose(idx index, self *ossav1.Agent, id string, r *versionRange) (candidate, bool) {
	var best candidate
	found := false
	for _, p := range idx[id] {
		if p == self || (p.Namespace == self.Namespace && p.Name == self.Name) {
			continue
		}
		c := candidate{peer: p}
		c.ready, c.notReady = peerReady(p)
		c.inRange = true
		if r != nil {
			c.inRange, c.outside = r.check(id, p.Spec.Agent.Version)
		}
		if !found || c.better(best) {
			best, found = c, true
		}
	}
	return best, found
}
