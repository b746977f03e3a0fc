package workflows_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/workflows"
)

// bombWorkflow references one 32 KiB input 20 times in each of 128 values of
// 40 steps: about 1.4 MB as written, 3.4 GB if expanded.
func bombWorkflow(name string) *v1alpha1.Workflow {
	value := strings.Repeat("${inputs.BIG}", 20)
	steps := make([]v1alpha1.WorkflowStep, 40)
	for i := range steps {
		in := map[string]string{}
		for k := range 128 {
			in[fmt.Sprintf("K%03d", k)] = value
		}
		steps[i] = step(fmt.Sprintf("s%02d", i), in)
	}
	wf := stepWorkflow(name, steps...)
	wf.Spec.Input = map[string]string{"BIG": strings.Repeat("x", 32<<10)}
	return wf
}

// TestInputTooLarge: a workflow whose step input would expand past the task
// input limits fails with reason InputTooLarge naming the step and key, at
// once when workflow inputs alone exceed them and when the step is due when
// a step output does; no task is created for the step.
func TestInputTooLarge(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns)

	start := time.Now()
	k.create(bombWorkflow("bomb"))
	k.create(stepWorkflow("late", step("a", nil), step("b", map[string]string{"IN": "<${steps.a.output.k}>"})))
	k.finish(k.waitTask("late", "a", 0), v1alpha1.TaskSucceeded, map[string]string{"k": strings.Repeat("x", 32767)})

	tests := []struct {
		name, want string
		tasks      []string
	}{
		{name: "bomb", want: `step "s00" input "K000" expands to more than 32768 bytes, the limit of a task input value`},
		{
			name: "late", want: `step "b" failed: input "IN" expands to more than 32768 bytes, the limit of a task input value`,
			tasks: names("late", "a 0"),
		},
	}
	for _, tt := range tests {
		failed := k.waitWorkflow(tt.name, v1alpha1.WorkflowFailed)
		assert.Equal(t, tt.want, failed.Status.Message, tt.name)
		ready := meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionReady)
		require.NotNil(t, ready)
		assert.Equal(t, workflows.ReasonInputTooLarge, ready.Reason, tt.name)
		assert.ElementsMatch(t, tt.tasks, k.taskNames(tt.name), tt.name)
	}
	assert.Less(t, time.Since(start), 10*time.Second, "both end within seconds")
}
