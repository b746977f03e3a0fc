package workflows

import (
	"errors"
	"fmt"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/workflows/subst"
)

// resolveInput substitutes step i's input values. The expansion stops at the
// task input limits (inputLimits), so memory stays bounded whatever the
// values reference.
func resolveInput(obs *observation, views []stepView, i int) (map[string]string, error) {
	step := obs.wf.Spec.Steps[i]
	if len(step.Input) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(step.Input))
	left := v1alpha1.MaxInputBytes
	for _, key := range sortedKeys(step.Input) {
		limit := min(v1alpha1.MaxInputValueBytes, left-len(key))
		v, err := subst.Expand(step.Input[key], resolver(obs, views), max(limit, 0))
		if errors.Is(err, subst.ErrTooLarge) {
			return nil, &inputTooLargeError{key: key, total: limit < v1alpha1.MaxInputValueBytes}
		}
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", key, err)
		}
		out[key] = v
		left -= len(key) + len(v)
	}
	return out, nil
}

// resolver looks up the values references name: workflow inputs and the
// outputs of the steps in views.
func resolver(obs *observation, views []stepView) func(subst.Ref) (string, error) {
	return func(ref subst.Ref) (string, error) {
		if ref.Kind == subst.Input {
			return obs.wf.Spec.Input[ref.Key], nil
		}
		j, _ := refStep(obs.graph, ref)
		if views[j].status.OutputTruncated {
			return "", &outputTruncatedError{step: views[j].status.Name, key: ref.Key}
		}
		val, ok := views[j].status.Output[ref.Key]
		if !ok {
			return "", fmt.Errorf("step %q produced no output key %q", views[j].status.Name, ref.Key)
		}
		return val, nil
	}
}

// enforceBudget fails succeeded steps whose output does not fit. Outputs
// stored by earlier reconciles are counted first, so a stored output is never
// evicted by one that arrives later.
func enforceBudget(obs *observation, views []stepView) {
	var fresh []int
	used := 0
	for i, v := range views {
		if v.status.Phase != v1alpha1.StepSucceeded {
			continue
		}
		if prev := prevStep(&obs.wf.Status, v.status.Name); prev != nil && prev.Phase == v1alpha1.StepSucceeded {
			used += outputSize(v.status.Output)
			continue
		}
		fresh = append(fresh, i)
	}
	for _, i := range fresh {
		size := outputSize(views[i].status.Output)
		var msg string
		switch {
		case size > obs.budget.PerStep:
			msg = fmt.Sprintf("output is %d bytes, over the budget of %d bytes per step", size, obs.budget.PerStep)
		case used+size > obs.budget.Total:
			msg = fmt.Sprintf("output is %d bytes and the workflow already stores %d, over the budget of %d bytes per workflow",
				size, used, obs.budget.Total)
		default:
			used += size
			continue
		}
		views[i].status.Output = nil
		views[i] = views[i].fail(obs, nil, ReasonOutputTooLarge, msg)
	}
}

// outputTruncatedError: a step reads the output of a step whose termination
// message the kubelet cut to its last bytes.
type outputTruncatedError struct{ step, key string }

func (e *outputTruncatedError) Error() string {
	return fmt.Sprintf("step %q's output was truncated: the kubelet kept only the last %d bytes of its termination message, "+
		"so key %q cannot be trusted; return larger results by reference", e.step, v1alpha1.MaxTerminationMessageBytes, e.key)
}
