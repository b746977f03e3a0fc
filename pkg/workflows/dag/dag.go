// Package dag turns a Workflow's steps into a dependency graph and answers the
// scheduling questions the controller asks: is the spec a DAG, which steps
// may start, which steps are ancestors of which. It is pure.
//
// Without any dependsOn the steps run one after another in list order: step
// i depends on step i-1. As soon as one step declares dependsOn, the graph is
// exactly what dependsOn says and steps without it are roots.
package dag

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Step is what the graph needs of a workflow step.
type Step struct {
	Name      string
	DependsOn []string
}

// ErrInvalid is wrapped by every error of Build.
var ErrInvalid = errors.New("invalid workflow graph")

// Graph is a validated, acyclic dependency graph over step indices.
type Graph struct {
	names []string
	index map[string]int
	deps  [][]int // deps[i]: the steps i waits for, ascending
	// ancestors[i][j] reports whether j is a transitive dependency of i.
	ancestors [][]bool
}

// Build validates steps (unique names, known dependencies, no self or cyclic
// dependency) and returns their graph.
func Build(steps []Step) (*Graph, error) {
	g := &Graph{index: make(map[string]int, len(steps)), deps: make([][]int, len(steps))}
	for i, s := range steps {
		if _, dup := g.index[s.Name]; dup {
			return nil, fmt.Errorf("%w: duplicate step name %q", ErrInvalid, s.Name)
		}
		g.index[s.Name] = i
		g.names = append(g.names, s.Name)
	}
	sequential := !slices.ContainsFunc(steps, func(s Step) bool { return len(s.DependsOn) > 0 })
	for i, s := range steps {
		if sequential {
			if i > 0 {
				g.deps[i] = []int{i - 1}
			}
			continue
		}
		for _, d := range s.DependsOn {
			j, ok := g.index[d]
			switch {
			case !ok:
				return nil, fmt.Errorf("%w: step %q depends on unknown step %q", ErrInvalid, s.Name, d)
			case j == i:
				return nil, fmt.Errorf("%w: step %q depends on itself", ErrInvalid, s.Name)
			}
			if !slices.Contains(g.deps[i], j) {
				g.deps[i] = append(g.deps[i], j)
			}
		}
		slices.Sort(g.deps[i])
	}
	order, err := g.topoOrder()
	if err != nil {
		return nil, err
	}
	g.ancestors = make([][]bool, len(steps))
	for _, i := range order {
		g.ancestors[i] = make([]bool, len(steps))
		for _, d := range g.deps[i] {
			g.ancestors[i][d] = true
			for k, anc := range g.ancestors[d] {
				g.ancestors[i][k] = g.ancestors[i][k] || anc
			}
		}
	}
	return g, nil
}

// topoOrder returns the steps in an order where dependencies come first
// (Kahn's algorithm), or an error naming the steps of a cycle.
func (g *Graph) topoOrder() ([]int, error) {
	n := len(g.names)
	pending := make([]int, n)
	dependents := make([][]int, n)
	for i, ds := range g.deps {
		pending[i] = len(ds)
		for _, d := range ds {
			dependents[d] = append(dependents[d], i)
		}
	}
	var queue, order []int
	for i := range n {
		if pending[i] == 0 {
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		order = append(order, i)
		for _, j := range dependents[i] {
			pending[j]--
			if pending[j] == 0 {
				queue = append(queue, j)
			}
		}
	}
	if len(order) == n {
		return order, nil
	}
	var cyclic []string
	for i := range n {
		if pending[i] > 0 {
			cyclic = append(cyclic, g.names[i])
		}
	}
	return nil, fmt.Errorf("%w: dependsOn forms a cycle through steps %s", ErrInvalid, strings.Join(cyclic, ", "))
}

// Len is the number of steps.
func (g *Graph) Len() int { return len(g.names) }

// Index returns the index of the step named name.
func (g *Graph) Index(name string) (int, bool) {
	i, ok := g.index[name]
	return i, ok
}

// Name returns the name of step i.
func (g *Graph) Name(i int) string { return g.names[i] }

// Deps returns the indices of the steps step i waits for, ascending.
func (g *Graph) Deps(i int) []int { return slices.Clone(g.deps[i]) }

// IsAncestor reports whether step j must succeed before step i can start,
// directly or transitively.
func (g *Graph) IsAncestor(i, j int) bool {
	return j >= 0 && j < len(g.names) && g.ancestors[i][j]
}

// Runnable returns the steps that may start: not started yet and with every
// dependency succeeded. started and succeeded are indexed by step.
func (g *Graph) Runnable(started, succeeded []bool) []int {
	var out []int
	for i := range g.names {
		if started[i] {
			continue
		}
		if !slices.ContainsFunc(g.deps[i], func(d int) bool { return !succeeded[d] }) {
			out = append(out, i)
		}
	}
	return out
}
