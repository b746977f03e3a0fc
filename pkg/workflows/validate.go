package workflows

import (
	"fmt"
	"slices"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/workflows/dag"
	"opsnorth.io/scheduler/pkg/workflows/subst"
)

// validateSpec checks what admission cannot: the dependsOn graph is acyclic,
// every reference in every step input is well formed, names a workflow input
// that is set or a step that is an ancestor of the referencing step, and no
// step's input exceeds the task input limits even if every step output it
// references is empty (checkInputSize). It runs before any step starts;
// missing output keys and outputs too large to substitute can only be found
// once the producing step finished.
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
		if err := checkInput(spec, g, i); err != nil {
			return nil, fmt.Errorf("step %q %w", step.Name, err)
		}
		if err := checkApproval(spec, g, i); err != nil {
			return nil, fmt.Errorf("step %q approval message: %w", step.Name, err)
		}
	}
	return g, nil
}

// checkInput parses each value of step i's input once: its references must
// be valid, and its size, measured as if every step output it references
// were empty (the least it can expand to), must fit the task input limits.
func checkInput(spec *v1alpha1.WorkflowSpec, g *dag.Graph, i int) error {
	input, total := spec.Steps[i].Input, 0
	leastSize := func(ref subst.Ref) int {
		if ref.Kind == subst.Input {
			return len(spec.Input[ref.Key])
		}
		return 0
	}
	for _, key := range sortedKeys(input) {
		segs, err := subst.Parse(input[key])
		if err != nil {
			return fmt.Errorf("input %q: %w", key, err)
		}
		for _, seg := range segs {
			if seg.Ref == nil {
				continue
			}
			if err := checkRef(spec, g, i, *seg.Ref); err != nil {
				return fmt.Errorf("input %q: %s: %w", key, seg.Ref, err)
			}
		}
		n := subst.Size(segs, leastSize)
		if n > v1alpha1.MaxInputValueBytes {
			return &inputTooLargeError{key: key}
		}
		if total = subst.SaturatingAdd(total, len(key)+n); total > v1alpha1.MaxInputBytes {
			return &inputTooLargeError{key: key, total: true}
		}
	}
	return nil
}

// checkApproval checks the references of approval step i's message.
func checkApproval(spec *v1alpha1.WorkflowSpec, g *dag.Graph, i int) error {
	gate := spec.Steps[i].Approval
	if gate == nil {
		return nil
	}
	segs, err := subst.Parse(gate.Message)
	if err != nil {
		return err
	}
	for _, seg := range segs {
		if seg.Ref == nil {
			continue
		}
		if err := checkRef(spec, g, i, *seg.Ref); err != nil {
			return fmt.Errorf("%s: %w", seg.Ref, err)
		}
	}
	return nil
}

// inputTooLargeError is a step input that expands beyond the task input limits.
type inputTooLargeError struct {
	key string
	// total: the input as a whole is too large, not the value of key alone.
	total bool
}

func (e *inputTooLargeError) Error() string {
	if e.total {
		return fmt.Sprintf("input %q: the input expands to more than %d bytes in all, the limit of a task's input",
			e.key, v1alpha1.MaxInputBytes)
	}
	return fmt.Sprintf("input %q expands to more than %d bytes, the limit of a task input value",
		e.key, v1alpha1.MaxInputValueBytes)
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
