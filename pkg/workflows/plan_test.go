package workflows

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

type stepWant struct {
	phase    v1alpha1.StepPhase
	attempts int32
	reason   string
	message  string
}

func TestDecide(t *testing.T) {
	seq := makeWorkflow("seq").input(map[string]string{"topic": "go"}).
		step("fetch", map[string]string{"Q": "${inputs.topic}"}).
		step("sum", map[string]string{"TEXT": "${steps.0.output.body}", "ESC": "$${x}"}).
		step("post", map[string]string{"S": "${steps.sum.output.summary}"})
	diamond := makeWorkflow("dia").step("a", nil).step("b", nil, "a").step("c", nil, "a").step("d", nil, "b", "c")
	retry := makeWorkflow("retry").step("flaky", nil).retries(2, 5).step("after", nil)
	now := t0.Add(time.Minute)

	tests := []struct {
		name        string
		wf          *v1alpha1.Workflow
		now         time.Time
		tasks       func(*v1alpha1.Workflow) []*v1alpha1.AgentTask
		lost        []string
		wantPhase   v1alpha1.WorkflowPhase
		wantReason  string
		wantMessage string
		wantStarts  map[string]int32 // step name -> attempt
		wantInputs  map[string]map[string]string
		wantSteps   []stepWant
		wantRequeue time.Duration
		wantCurrent int32
	}{
		{
			name: "fresh sequential starts the first step only", wf: seq.obj(), now: now,
			wantPhase: v1alpha1.WorkflowRunning, wantReason: ReasonRunning,
			wantStarts: map[string]int32{"fetch": 0}, wantInputs: map[string]map[string]string{"fetch": {"Q": "go"}},
			wantSteps: []stepWant{{phase: v1alpha1.StepPending}, {phase: v1alpha1.StepPending}, {phase: v1alpha1.StepPending}},
		},
		{
			name: "outputs pass by index and escapes stay literal", wf: seq.obj(), now: now,
			tasks: func(wf *v1alpha1.Workflow) []*v1alpha1.AgentTask {
				return []*v1alpha1.AgentTask{task(wf, "fetch", 0, v1alpha1.TaskSucceeded, map[string]string{"body": "B"})}
			},
			wantPhase: v1alpha1.WorkflowRunning, wantReason: ReasonRunning,
			wantStarts: map[string]int32{"sum": 0}, wantInputs: map[string]map[string]string{"sum": {"TEXT": "B", "ESC": "${x}"}},
			wantSteps:   []stepWant{{phase: v1alpha1.StepSucceeded, attempts: 1}, {phase: v1alpha1.StepPending}, {phase: v1alpha1.StepPending}},
			wantCurrent: 1,
		},
		{
			name: "missing output key fails before the step starts", wf: seq.obj(), now: now,
			tasks: func(wf *v1alpha1.Workflow) []*v1alpha1.AgentTask {
				return []*v1alpha1.AgentTask{
					task(wf, "fetch", 0, v1alpha1.TaskSucceeded, map[string]string{"body": "B"}),
					task(wf, "sum", 0, v1alpha1.TaskSucceeded, map[string]string{"other": "x"}),
				}
			},
			wantPhase: v1alpha1.WorkflowFailed, wantReason: ReasonMissingOutput,
			wantMessage: `step "post" failed: input "S": ${steps.sum.output.summary}: step "sum" produced no output key "summary"`,
			wantSteps: []stepWant{
				{phase: v1alpha1.StepSucceeded, attempts: 1}, {phase: v1alpha1.StepSucceeded, attempts: 1},
				{phase: v1alpha1.StepFailed, message: `input "S": ${steps.sum.output.summary}: step "sum" produced no output key "summary"`},
			},
			wantCurrent: 3,
		},
		{
			name: "diamond runs both branches", wf: diamond.obj(), now: now,
			tasks: func(wf *v1alpha1.Workflow) []*v1alpha1.AgentTask {
				return []*v1alpha1.AgentTask{task(wf, "a", 0, v1alpha1.TaskSucceeded, nil)}
			},
			wantPhase: v1alpha1.WorkflowRunning, wantReason: ReasonRunning, wantStarts: map[string]int32{"b": 0, "c": 0},
			wantSteps: []stepWant{
				{phase: v1alpha1.StepSucceeded, attempts: 1}, {phase: v1alpha1.StepPending}, {phase: v1alpha1.StepPending}, {phase: v1alpha1.StepPending},
			},
			wantCurrent: 1,
		},
		{
			name: "diamond join waits for both branches", wf: diamond.obj(), now: now,
			tasks: func(wf *v1alpha1.Workflow) []*v1alpha1.AgentTask {
				return []*v1alpha1.AgentTask{
					task(wf, "a", 0, v1alpha1.TaskSucceeded, nil), task(wf, "b", 0, v1alpha1.TaskSucceeded, nil),
					task(wf, "c", 0, v1alpha1.TaskRunning, nil),
				}
			},
			wantPhase: v1alpha1.WorkflowRunning, wantReason: ReasonRunning,
			wantSteps: []stepWant{
				{phase: v1alpha1.StepSucceeded, attempts: 1}, {phase: v1alpha1.StepSucceeded, attempts: 1},
				{phase: v1alpha1.StepRunning, attempts: 1}, {phase: v1alpha1.StepPending},
			},
			wantCurrent: 2,
		},
		{
			name: "failed attempt waits for its backoff", wf: retry.obj(), now: t0.Add(12 * time.Second),
			// failed at t0+10s (whole seconds): backoff 5s counts from t0+11s.
			tasks: func(wf *v1alpha1.Workflow) []*v1alpha1.AgentTask {
				return []*v1alpha1.AgentTask{task(wf, "flaky", 0, v1alpha1.TaskFailed, nil)}
			},
			wantPhase: v1alpha1.WorkflowRunning, wantReason: ReasonRunning, wantRequeue: 4 * time.Second,
			wantSteps: []stepWant{{phase: v1alpha1.StepRetrying, attempts: 1, message: "attempt 1 Failed: exit code 1"}, {phase: v1alpha1.StepPending}},
		},
		{
			name: "retry starts once the backoff passed", wf: retry.obj(), now: t0.Add(16 * time.Second),
			tasks: func(wf *v1alpha1.Workflow) []*v1alpha1.AgentTask {
				return []*v1alpha1.AgentTask{task(wf, "flaky", 0, v1alpha1.TaskFailed, nil)}
			},
			wantPhase: v1alpha1.WorkflowRunning, wantReason: ReasonRunning, wantRequeue: time.Millisecond,
			wantStarts: map[string]int32{"flaky": 1},
			wantSteps:  []stepWant{{phase: v1alpha1.StepRetrying, attempts: 1, message: "attempt 1 Failed: exit code 1"}, {phase: v1alpha1.StepPending}},
		},
		{
			name: "retries exhausted fail the workflow", wf: retry.obj(), now: now,
			tasks: func(wf *v1alpha1.Workflow) []*v1alpha1.AgentTask {
				return []*v1alpha1.AgentTask{
					task(wf, "flaky", 0, v1alpha1.TaskFailed, nil), task(wf, "flaky", 1, v1alpha1.TaskFailed, nil),
					task(wf, "flaky", 2, v1alpha1.TaskTimeout, nil),
				}
			},
			wantPhase: v1alpha1.WorkflowFailed, wantReason: ReasonStepFailed,
			wantMessage: `step "flaky" failed: Timeout after 3 attempt(s): no reason given`,
			wantSteps: []stepWant{
				{phase: v1alpha1.StepFailed, attempts: 3, message: "Timeout after 3 attempt(s): no reason given"},
				{phase: v1alpha1.StepSkipped, message: `not started: the workflow failed: step "flaky" failed: Timeout after 3 attempt(s): no reason given`},
			},
			wantCurrent: 2,
		},
		{
			name: "a failed branch stops its running sibling", wf: diamond.obj(), now: now,
			tasks: func(wf *v1alpha1.Workflow) []*v1alpha1.AgentTask {
				return []*v1alpha1.AgentTask{
					task(wf, "a", 0, v1alpha1.TaskSucceeded, nil), task(wf, "b", 0, v1alpha1.TaskFailed, nil),
					task(wf, "c", 0, v1alpha1.TaskRunning, nil),
				}
			},
			wantPhase: v1alpha1.WorkflowFailed, wantReason: ReasonStepFailed,
			wantMessage: `step "b" failed: Failed after 1 attempt(s): exit code 1`,
			wantSteps: []stepWant{
				{phase: v1alpha1.StepSucceeded, attempts: 1},
				{phase: v1alpha1.StepFailed, attempts: 1, message: "Failed after 1 attempt(s): exit code 1"},
				{phase: v1alpha1.StepFailed, attempts: 1, message: `stopped: the workflow failed: step "b" failed: Failed after 1 attempt(s): exit code 1`},
				{phase: v1alpha1.StepSkipped, message: `not started: the workflow failed: step "b" failed: Failed after 1 attempt(s): exit code 1`},
			},
			wantCurrent: 4,
		},
		{
			name: "timeout stops running steps", wf: makeWorkflow("slow").step("a", nil).step("b", nil).timeout(30).started().obj(),
			now: t0.Add(31 * time.Second), // started within [t0, t0+1s): 30s have surely passed
			tasks: func(wf *v1alpha1.Workflow) []*v1alpha1.AgentTask {
				return []*v1alpha1.AgentTask{task(wf, "a", 0, v1alpha1.TaskRunning, nil)}
			},
			wantPhase: v1alpha1.WorkflowFailed, wantReason: ReasonTimeout, wantMessage: "workflow timed out after 30s",
			wantSteps: []stepWant{
				{phase: v1alpha1.StepFailed, attempts: 1, message: "stopped: the workflow failed: workflow timed out after 30s"},
				{phase: v1alpha1.StepSkipped, message: "not started: the workflow failed: workflow timed out after 30s"},
			},
			wantCurrent: 2,
		},
		{
			name: "running workflow wakes at its deadline", wf: makeWorkflow("slow").step("a", nil).timeout(30).started().obj(),
			now: t0.Add(10 * time.Second),
			tasks: func(wf *v1alpha1.Workflow) []*v1alpha1.AgentTask {
				return []*v1alpha1.AgentTask{task(wf, "a", 0, v1alpha1.TaskRunning, nil)}
			},
			wantPhase: v1alpha1.WorkflowRunning, wantReason: ReasonRunning, wantRequeue: 21 * time.Second,
			wantSteps: []stepWant{{phase: v1alpha1.StepRunning, attempts: 1}},
		},
		{
			name: "cycle is refused before any step", wf: makeWorkflow("cyc").step("a", nil, "b").step("b", nil, "a").obj(), now: now,
			wantPhase: v1alpha1.WorkflowFailed, wantReason: ReasonInvalidSpec,
			wantMessage: "invalid spec: invalid workflow graph: dependsOn forms a cycle through steps a, b",
			wantSteps: []stepWant{
				{phase: v1alpha1.StepSkipped, message: "not started: the workflow failed: invalid spec: invalid workflow graph: dependsOn forms a cycle through steps a, b"},
				{phase: v1alpha1.StepSkipped, message: "not started: the workflow failed: invalid spec: invalid workflow graph: dependsOn forms a cycle through steps a, b"},
			},
			wantCurrent: 2,
		},
		{
			name: "all succeeded", wf: makeWorkflow("ok").step("a", nil).step("b", nil).started().obj(), now: t0.Add(90 * time.Second),
			tasks: func(wf *v1alpha1.Workflow) []*v1alpha1.AgentTask {
				return []*v1alpha1.AgentTask{task(wf, "a", 0, v1alpha1.TaskSucceeded, nil), task(wf, "b", 0, v1alpha1.TaskSucceeded, nil)}
			},
			wantPhase: v1alpha1.WorkflowSucceeded, wantReason: ReasonSucceeded, wantMessage: "all 2 steps succeeded",
			wantSteps:   []stepWant{{phase: v1alpha1.StepSucceeded, attempts: 1}, {phase: v1alpha1.StepSucceeded, attempts: 1}},
			wantCurrent: 2,
		},
		{
			name: "per-step output budget", wf: makeWorkflow("big").step("a", nil).step("b", nil).obj(), now: now,
			tasks: func(wf *v1alpha1.Workflow) []*v1alpha1.AgentTask {
				return []*v1alpha1.AgentTask{task(wf, "a", 0, v1alpha1.TaskSucceeded, map[string]string{"k": strings.Repeat("x", 4096)})}
			},
			wantPhase: v1alpha1.WorkflowFailed, wantReason: ReasonOutputTooLarge,
			wantMessage: `step "a" failed: output is 4097 bytes, over the budget of 4096 bytes per step`,
			wantSteps: []stepWant{
				{phase: v1alpha1.StepFailed, attempts: 1, message: "output is 4097 bytes, over the budget of 4096 bytes per step"},
				{phase: v1alpha1.StepSkipped, message: `not started: the workflow failed: step "a" failed: output is 4097 bytes, over the budget of 4096 bytes per step`},
			},
			wantCurrent: 2,
		},
		{
			name: "an input that expands past a value's limit fails before any step runs", now: now,
			wf: makeWorkflow("fan").input(map[string]string{"big": strings.Repeat("x", 20<<10)}).
				step("a", map[string]string{"OK": "${inputs.big}"}).
				step("b", map[string]string{"TWICE": "${inputs.big}${inputs.big}"}).obj(),
			wantPhase: v1alpha1.WorkflowFailed, wantReason: ReasonInputTooLarge,
			wantMessage: `step "b" input "TWICE" expands to more than 32768 bytes, the limit of a task input value`,
			wantSteps: []stepWant{
				{phase: v1alpha1.StepSkipped, message: `not started: the workflow failed: step "b" input "TWICE" expands to more than 32768 bytes, the limit of a task input value`},
				{phase: v1alpha1.StepSkipped, message: `not started: the workflow failed: step "b" input "TWICE" expands to more than 32768 bytes, the limit of a task input value`},
			},
			wantCurrent: 2,
		},
		{
			name: "values that together pass a task's limit fail before any step runs", now: now,
			wf: makeWorkflow("wide").input(map[string]string{"big": strings.Repeat("x", 30<<10)}).
				step("a", func() map[string]string {
					in := map[string]string{}
					for i := range 9 {
						in[fmt.Sprintf("K%d", i)] = "${inputs.big}"
					}
					return in
				}()).obj(),
			wantPhase: v1alpha1.WorkflowFailed, wantReason: ReasonInputTooLarge,
			wantMessage: `step "a" input "K8": the input expands to more than 262144 bytes in all, the limit of a task's input`,
			wantSteps: []stepWant{
				{phase: v1alpha1.StepSkipped, message: `not started: the workflow failed: step "a" input "K8": the input expands to more than 262144 bytes in all, the limit of a task's input`},
			},
			wantCurrent: 1,
		},
		{
			name: "an output too large to substitute fails the step that reads it", now: now,
			wf: makeWorkflow("out").step("a", nil).step("b", map[string]string{"IN": "<" + strings.Repeat("${steps.a.output.k}", 9) + ">"}).obj(),
			tasks: func(wf *v1alpha1.Workflow) []*v1alpha1.AgentTask {
				return []*v1alpha1.AgentTask{task(wf, "a", 0, v1alpha1.TaskSucceeded, map[string]string{"k": strings.Repeat("x", 3641)})}
			},
			wantPhase: v1alpha1.WorkflowFailed, wantReason: ReasonInputTooLarge,
			wantMessage: `step "b" failed: input "IN" expands to more than 32768 bytes, the limit of a task input value`,
			wantSteps: []stepWant{
				{phase: v1alpha1.StepSucceeded, attempts: 1},
				{phase: v1alpha1.StepFailed, message: `input "IN" expands to more than 32768 bytes, the limit of a task input value`},
			},
			wantCurrent: 2,
		},
		{
			name: "a step whose agent could not start fails with its task's reason", now: now,
			wf: makeWorkflow("pull").step("a", nil).step("b", nil).obj(),
			tasks: func(wf *v1alpha1.Workflow) []*v1alpha1.AgentTask {
				t := task(wf, "a", 0, v1alpha1.TaskFailed, nil)
				t.Status.Reason, t.Status.Message = "ImagePullBackOff", `the agent did not start within 10m0s: pod a-x: Back-off pulling image "registry.invalid/a:1"`
				return []*v1alpha1.AgentTask{t}
			},
			wantPhase: v1alpha1.WorkflowFailed, wantReason: "ImagePullBackOff",
			wantMessage: `step "a" failed: Failed after 1 attempt(s): the agent did not start within 10m0s: pod a-x: Back-off pulling image "registry.invalid/a:1"`,
			wantSteps: []stepWant{
				{phase: v1alpha1.StepFailed, attempts: 1, reason: "ImagePullBackOff",
					message: `Failed after 1 attempt(s): the agent did not start within 10m0s: pod a-x: Back-off pulling image "registry.invalid/a:1"`},
				{phase: v1alpha1.StepSkipped, message: `not started: the workflow failed: step "a" failed: Failed after 1 attempt(s): the agent did not start within 10m0s: pod a-x: Back-off pulling image "registry.invalid/a:1"`},
			},
			wantCurrent: 2,
		},
		{
			name: "a step that reads a truncated output fails", now: now,
			wf: makeWorkflow("cut").step("a", nil).step("b", map[string]string{"IN": "${steps.a.output.result}"}).obj(),
			tasks: func(wf *v1alpha1.Workflow) []*v1alpha1.AgentTask {
				t := task(wf, "a", 0, v1alpha1.TaskSucceeded, map[string]string{"result": `..."tail"}`})
				t.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionOutputTruncated, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonOutputTruncated}}
				return []*v1alpha1.AgentTask{t}
			},
			wantPhase: v1alpha1.WorkflowFailed, wantReason: v1alpha1.ReasonOutputTruncated,
			wantMessage: `step "b" failed: input "IN": ${steps.a.output.result}: step "a"'s output was truncated: the kubelet kept only the last 4096 bytes of its termination message, so key "result" cannot be trusted; return larger results by reference`,
			wantSteps: []stepWant{
				{phase: v1alpha1.StepSucceeded, attempts: 1},
				{phase: v1alpha1.StepFailed, reason: v1alpha1.ReasonOutputTruncated,
					message: `input "IN": ${steps.a.output.result}: step "a"'s output was truncated: the kubelet kept only the last 4096 bytes of its termination message, so key "result" cannot be trusted; return larger results by reference`},
			},
			wantCurrent: 2,
		},
		{
			name: "deleted task fails its step", now: now,
			wf: func() *v1alpha1.Workflow {
				wf := makeWorkflow("gone").step("a", nil).started().obj()
				wf.Status.StepStatuses = []v1alpha1.StepStatus{{Name: "a", Phase: v1alpha1.StepRunning, Attempts: 1}}
				return wf
			}(),
			lost:      []string{TaskName("gone", "a", 0)},
			wantPhase: v1alpha1.WorkflowFailed, wantReason: ReasonTaskDeleted,
			wantMessage: `step "a" failed: AgentTask ` + TaskName("gone", "a", 0) + ` was deleted before it finished`,
			wantSteps:   []stepWant{{phase: v1alpha1.StepFailed, attempts: 1, message: "AgentTask " + TaskName("gone", "a", 0) + " was deleted before it finished"}},
			wantCurrent: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tasks []*v1alpha1.AgentTask
			if tt.tasks != nil {
				tasks = tt.tasks(tt.wf)
			}
			obs := observe(tt.wf, tt.now, tasks...)
			for _, name := range tt.lost {
				obs.lost[name] = true
			}
			p := decide(obs)
			st := p.status
			assert.Equal(t, tt.wantPhase, st.Phase)
			assert.Equal(t, tt.wantReason, p.reason)
			if tt.wantMessage != "" {
				assert.Equal(t, tt.wantMessage, st.Message)
			}
			assert.Equal(t, tt.wantRequeue, p.requeue)
			assert.Equal(t, tt.wantCurrent, st.CurrentStep)
			starts := map[string]int32{}
			inputs := map[string]map[string]string{}
			for _, s := range p.starts {
				starts[tt.wf.Spec.Steps[s.step].Name] = s.attempt
				if s.input != nil {
					inputs[tt.wf.Spec.Steps[s.step].Name] = s.input
				}
			}
			if tt.wantStarts == nil {
				tt.wantStarts = map[string]int32{}
			}
			if tt.wantInputs == nil {
				tt.wantInputs = map[string]map[string]string{}
			}
			assert.Equal(t, tt.wantStarts, starts)
			assert.Equal(t, tt.wantInputs, inputs)
			require.Len(t, st.StepStatuses, len(tt.wantSteps))
			for i, want := range tt.wantSteps {
				got := st.StepStatuses[i]
				if want.reason == "" {
					want.reason = got.Reason // checked where a case names it
				}
				assert.Equal(t, want, stepWant{phase: got.Phase, attempts: got.Attempts, reason: got.Reason, message: got.Message}, "step %s", got.Name)
			}
			ready := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
			require.NotNil(t, ready)
			assert.Equal(t, tt.wantReason, ready.Reason)
			assert.Equal(t, int64(1), ready.ObservedGeneration)
			assertSummary(t, st)
			if st.Phase.IsTerminal() {
				require.NotNil(t, st.CompletionTime)
				assert.Equal(t, st.CompletionTime.Sub(st.StartTime.Time).String(), st.Duration)
			}
		})
	}
}

// TestDecideConverges: deciding again on the status just decided, with the
// same tasks, changes nothing, so a converged reconcile writes nothing.
func TestDecideConverges(t *testing.T) {
	wf := makeWorkflow("dia").step("a", nil).step("b", nil, "a").step("c", nil, "a").step("d", nil, "b", "c").timeout(600).obj()
	tasks := []*v1alpha1.AgentTask{
		task(wf, "a", 0, v1alpha1.TaskSucceeded, map[string]string{"x": "1"}),
		task(wf, "b", 0, v1alpha1.TaskRunning, nil), task(wf, "c", 0, v1alpha1.TaskPending, nil),
	}
	first := decide(observe(wf, t0.Add(time.Minute), tasks...))
	wf.Status = *first.status.DeepCopy()
	second := decide(observe(wf, t0.Add(2*time.Minute), tasks...))
	assert.True(t, equality.Semantic.DeepEqual(first.status, second.status), "status changed on a converged decision")
	assert.Empty(t, second.starts)

	done := decide(observe(wf, t0.Add(3*time.Minute), append(tasks[:1:1],
		task(wf, "b", 0, v1alpha1.TaskSucceeded, nil), task(wf, "c", 0, v1alpha1.TaskSucceeded, nil),
		task(wf, "d", 0, v1alpha1.TaskSucceeded, nil))...))
	assert.Equal(t, v1alpha1.WorkflowSucceeded, done.status.Phase)
	assert.Equal(t, "2m0s", done.status.Duration) // started at the first decision, t0+1m
}

func TestBackoff(t *testing.T) {
	step := v1alpha1.WorkflowStep{Retries: &v1alpha1.RetryPolicy{Limit: 10, BackoffSeconds: new(int32(5)), MaxBackoffSeconds: new(int32(30))}}
	var got []time.Duration
	for k := range int32(5) {
		got = append(got, backoff(step, k))
	}
	assert.Equal(t, []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 30 * time.Second, 30 * time.Second}, got)
	assert.Equal(t, 5*time.Second, backoff(v1alpha1.WorkflowStep{}, 0))
}

// TestPathologicalFanOutStaysSmall: one 32 KiB input referenced in every
// value of 40 steps (gigabytes if expanded) fails the workflow on its first
// decision, and deciding allocates a few MiB, not the expansion.
func TestPathologicalFanOutStaysSmall(t *testing.T) {
	b := makeWorkflow("bomb").input(map[string]string{"BIG": strings.Repeat("x", 32<<10)})
	value := strings.Repeat("${inputs.BIG}", 21) // 273 bytes; 40x128 of them fit one object
	for i := range 40 {
		in := map[string]string{}
		for k := range 128 {
			in[fmt.Sprintf("K%03d", k)] = value
		}
		b.step(fmt.Sprintf("s%02d", i), in)
	}
	wf := b.obj()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p := decide(observe(wf, t0.Add(time.Minute)))
	runtime.ReadMemStats(&after)

	assert.Equal(t, v1alpha1.WorkflowFailed, p.status.Phase)
	assert.Equal(t, ReasonInputTooLarge, p.reason)
	assert.Equal(t, `step "s00" input "K000" expands to more than 32768 bytes, the limit of a task input value`, p.status.Message)
	assert.Empty(t, p.starts)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "allocated %d bytes", after.TotalAlloc-before.TotalAlloc)
}
