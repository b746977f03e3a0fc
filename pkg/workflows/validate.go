package workflows

import (
	"fmt"
	"slices"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/workflows/dag"
	"opsnorth.io/scheduler/pkg/workflows/subst"
)

// validateSpec checks what admission cannot: the dependsOn graph is acyclic,
// and every reference in every step input is well formed, names a workflow
// input that is set or a step that is an ancestor of the referencing step.
// It runs before any step starts; missing output keys can only be found once
// the producing step finished.
func validateSpec(spec *v1alpha1.WorkflowSpec) (*dag.Graph, error) {
	nodes := make([]dag.Step, len(spec.Steps))
	for i, s := range spec.Steps {
		nodes[i] = dag.Step{Name: s.Name, DependsOn: s.DependsOn}
	}
	g, err := dag.Build(nodes)
	if err != nil {
		return nil, err
	}
	for i, step := range spec.Steps {
		for _, key := range sortedKeys(step.Input) {
			refs, err := subst.References(step.Input[key])
			if err != nil {
				return nil, fmt.Errorf("step %q input %q: %w", step.Name, key, err)
			}
			for _, ref := range refs {
				if err := checkRef(spec, g, i, ref); err != nil {
					return nil, fmt.Errorf("step %q input %q: %s: %w", step.Name, key, ref, err)
				}
			}
		}
	}
	return g, nil
}

func checkRef(spec *v1alpha1.WorkflowSpec, g *dag.Graph, i int, ref subst.Ref) error {
	if ref.Kind == subst.Input {
		if _, ok := spec.Input[ref.Key]; !ok {
			return fmt.Errorf("workflow input %q is not set", ref.Key)
		}
		return nil
	}
	j, ok := refStep(g, ref)
	if !ok {
		if ref.Index >= 0 {
			return fmt.Errorf("no step with index %d (the workflow has %d steps)", ref.Index, g.Len())
		}
		return fmt.Errorf("no step named %q", ref.Step)
	}
	if !g.IsAncestor(i, j) {
		return fmt.Errorf("step %q is not an ancestor of step %q, so its output is not available", g.Name(j), g.Name(i))
	}
	return nil
}

// refStep returns the index of the step a reference names.
func refStep(g *dag.Graph, ref subst.Ref) (int, bool) {
	if ref.Index >= 0 {
		return ref.Index, ref.Index < g.Len()
	}
	return g.Index(ref.Step)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
