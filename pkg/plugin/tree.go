package plugin

import (
	"slices"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// treeLine is one step in display order, with the tree drawing before it
// and the dependencies the tree does not show.
type treeLine struct {
	step   int
	prefix string
	alsoOn []string
}

// branches are the box-drawing pieces of a tree, or their ASCII stand-ins.
type branches struct{ tee, last, pipe, blank string }

func (s style) branches() branches {
	if s.fancy {
		return branches{tee: "├─", last: "└─", pipe: "│ ", blank: "  "}
	}
	return branches{tee: "|-", last: "`-", pipe: "| ", blank: "  "}
}

// stepTree orders the steps for display. Without any dependsOn the steps
// run in list order and are listed flat. In a DAG each step hangs under the
// dependency that comes last in the spec (the one usually finishing last);
// its other dependencies are returned in alsoOn. Steps a cycle keeps out of
// the tree (the workflows manager refuses such a spec) follow at the end.
func stepTree(steps []v1alpha1.WorkflowStep, b branches) []treeLine {
	index := map[string]int{}
	dag := false
	for i, s := range steps {
		index[s.Name] = i
		dag = dag || len(s.DependsOn) > 0
	}
	lines := make([]treeLine, 0, len(steps))
	if !dag {
		for i := range steps {
			lines = append(lines, treeLine{step: i})
		}
		return lines
	}
	children := make([][]int, len(steps))
	also := make([][]string, len(steps))
	var roots []int
	for i, s := range steps {
		parent := -1
		for _, d := range s.DependsOn {
			if j, ok := index[d]; ok && j != i && j > parent {
				parent = j
			}
		}
		if parent < 0 {
			roots = append(roots, i)
			continue
		}
		children[parent] = append(children[parent], i)
		for _, d := range s.DependsOn {
			if d != steps[parent].Name {
				also[i] = append(also[i], d)
			}
		}
	}
	seen := make([]bool, len(steps))
	var walk func(i int, lead, indent string)
	walk = func(i int, lead, indent string) {
		if seen[i] {
			return
		}
		seen[i] = true
		lines = append(lines, treeLine{step: i, prefix: lead, alsoOn: also[i]})
		kids := slices.DeleteFunc(slices.Clone(children[i]), func(k int) bool { return seen[k] })
		for n, k := range kids {
			if n == len(kids)-1 {
				walk(k, indent+b.last, indent+b.blank)
			} else {
				walk(k, indent+b.tee, indent+b.pipe)
			}
		}
	}
	for _, r := range roots {
		walk(r, "", "")
	}
	for i := range steps {
		if !seen[i] {
			seen[i] = true
			lines = append(lines, treeLine{step: i, alsoOn: steps[i].DependsOn})
		}
	}
	return lines
}
