package resolve

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
)

func TestDependencyCycles(t *testing.T) {
	tests := []struct {
		name  string
		agent *ossav1.Agent
		peers []*ossav1.Agent
		cycle []string
		msg   string
	}{{
		name:  "itself",
		agent: makeAgent("a", "1.0.0").requires("a", "1.0.0", "").obj(),
		cycle: []string{"a", "a"},
		msg:   `dependency cycle: a -> a; required agent "a" not found in namespace`,
	}, {
		name:  "two, both ready",
		agent: makeAgent("a", "1.0.0").requires("b", "1.0.0", "").obj(),
		peers: []*ossav1.Agent{makeAgent("b", "1.0.0").requires("a", "1.0.0", "").ready().obj()},
		cycle: []string{"a", "b", "a"},
		msg:   "dependency cycle: a -> b -> a",
	}, {
		name:  "the shortest of two",
		agent: makeAgent("a", "1.0.0").requires("b", "1.0.0", "").requires("c", "1.0.0", "").obj(),
		peers: []*ossav1.Agent{
			makeAgent("b", "1.0.0").requires("d", "1.0.0", "").ready().obj(),
			makeAgent("d", "1.0.0").requires("a", "1.0.0", "").ready().obj(),
			makeAgent("c", "1.0.0").requires("a", "1.0.0", "").ready().obj(),
		},
		cycle: []string{"a", "c", "a"},
		msg:   "dependency cycle: a -> c -> a",
	}, {
		name:  "through another Agent with the id",
		agent: makeAgent("a", "1.0.0").requires("b", "1.0.0", "").obj(),
		peers: []*ossav1.Agent{
			makeAgent("b", "1.0.0").ready().obj(),
			makeAgent("b", "0.1.0").name("b-old").requires("c", "1.0.0", "").obj(),
			makeAgent("c", "1.0.0").requires("a", "1.0.0", "").ready().obj(),
		},
		cycle: []string{"a", "b", "c", "a"},
		msg:   "dependency cycle: a -> b -> c -> a",
	}, {
		name:  "optional dependencies make no cycle",
		agent: makeAgent("a", "1.0.0").requires("b", "1.0.0", "").obj(),
		peers: []*ossav1.Agent{makeAgent("b", "1.0.0").uses("a", "").ready().obj()},
	}, {
		name:  "a cycle that does not reach back is not this agent's",
		agent: makeAgent("a", "1.0.0").requires("b", "1.0.0", "").obj(),
		peers: []*ossav1.Agent{
			makeAgent("b", "1.0.0").requires("c", "1.0.0", "").ready().obj(),
			makeAgent("c", "1.0.0").requires("b", "1.0.0", "").ready().obj(),
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Dependencies(tt.agent, append(tt.peers, tt.agent))
			assert.Equal(t, tt.cycle, got.Cycle)
			if tt.cycle == nil {
				assert.True(t, got.Ready, got.Message)
				return
			}
			assert.False(t, got.Ready)
			assert.Equal(t, ReasonDependencyCycle, got.Reason)
			assert.Equal(t, tt.msg, got.Message)
			note := "in " + cycleText(tt.cycle)
			for _, d := range got.Dependencies {
				if d.AgentID == tt.cycle[1] {
					assert.Contains(t, d.Message, note)
				} else {
					assert.NotContains(t, d.Message, note)
				}
			}
		})
	}
}

// namespace is n Agents a0..a<n-1>, all ready, each requiring the next
// deps ids: with wrap, ids past the end wrap around (cycles everywhere);
// without, they are skipped (no cycle: every id is explored).
func namespace(n, deps int, wrap bool) []*ossav1.Agent {
	peers := make([]*ossav1.Agent, n)
	for i := range n {
		w := makeAgent(fmt.Sprintf("a%d", i), "1.0.0")
		for j := i + 1; j <= i+deps; j++ {
			if j < n || wrap {
				w.requires(fmt.Sprintf("a%d", j%n), "1.0.0", "")
			}
		}
		peers[i] = w.ready().obj()
	}
	return peers
}

func TestDependenciesLargeNamespaceIsFast(t *testing.T) {
	for _, wrap := range []bool{false, true} {
		peers := namespace(1100, 32, wrap)
		start := time.Now()
		const calls = 5
		var got Result
		for range calls {
			got = Dependencies(peers[0], peers)
		}
		per := time.Since(start) / calls
		t.Logf("wrap=%v: %v per call, cycle %v", wrap, per, got.Cycle)
		assert.Less(t, per, 200*time.Millisecond)
		assert.Equal(t, wrap, got.Cycle != nil)
		assert.Len(t, got.Dependencies, 32)
	}
}

func BenchmarkDependencies(b *testing.B) {
	for _, wrap := range []bool{false, true} {
		peers := namespace(1100, 32, wrap)
		b.Run(fmt.Sprintf("1100x32/cycle=%v", wrap), func(b *testing.B) {
			for b.Loop() {
				Dependencies(peers[0], peers)
			}
		})
	}
}
