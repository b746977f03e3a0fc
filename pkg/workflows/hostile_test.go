package workflows_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/refusal"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
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
	k.create(stepWorkflow("late", step("a", nil), step("b", map[string]string{"IN": "<" + strings.Repeat("${steps.a.output.k}", 9) + ">"})))
	k.finish(k.waitTask("late", "a", 0), v1alpha1.TaskSucceeded, map[string]string{"k": strings.Repeat("x", 3641)})

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

// TestStepTaskRefusals: a step task the API server refuses for good fails
// the workflow with the server's message and the refusal's reason; quota
// keeps it Running, saying why, until it allows the task.
func TestStepTaskRefusals(t *testing.T) {
	k := newCluster(t)
	c, err := client.New(testenv.Require(t).Config, client.Options{Scheme: scheme.Scheme})
	require.NoError(t, err)
	require.NoError(t, v1alpha1.AddToScheme(c.Scheme()))
	probe := testkit.MakeAgentTask("probe", k.ns).Obj()
	probe.Spec.Image = "denied:1"
	testkit.DenyCreate(t, c, k.ns, v1alpha1.GroupName, "agenttasks", `object.spec.image != "denied:1"`,
		"image denied:1 is not allowed here", probe)
	startManager(t, k.ns)

	denied := stepWorkflow("denied", step("a", nil))
	denied.Spec.Steps[0].Image = "denied:1"
	k.create(denied)
	failed := k.waitWorkflow("denied", v1alpha1.WorkflowFailed)
	ready := meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, refusal.ReasonAdmissionDenied, ready.Reason)
	assert.Contains(t, failed.Status.Message, `step "a" failed: the API server refused the step's AgentTask: `)
	assert.Contains(t, failed.Status.Message, "image denied:1 is not allowed here")
	assert.Empty(t, k.taskNames("denied"))

	testkit.SetQuota(t, c, k.ns, "count/agenttasks.scheduler.opsnorth.io", 0)
	k.create(stepWorkflow("queued", step("a", nil)))
	waiting := testkit.WaitFor(t, wait, func() *v1alpha1.Workflow { return k.workflow("queued") },
		func(wf *v1alpha1.Workflow) bool { return strings.Contains(wf.Status.Message, "QuotaExceeded") },
		"the workflow never said why its step does not start")
	assert.Equal(t, v1alpha1.WorkflowRunning, waiting.Status.Phase)
	assert.Contains(t, waiting.Status.Message, "the API server refused a step's AgentTask (QuotaExceeded), retrying: ")
	testkit.SetQuota(t, c, k.ns, "count/agenttasks.scheduler.opsnorth.io", 5)
	k.waitTask("queued", "a", 0)
}
