package workflows

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// t0 is the fixtures' clock origin.
var t0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// wfBuilder is a fluent Workflow fixture.
type wfBuilder struct{ wf *v1alpha1.Workflow }

func makeWorkflow(name string) *wfBuilder {
	return &wfBuilder{wf: &v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), Generation: 1},
		Spec:       v1alpha1.WorkflowSpec{UserID: "u1"},
	}}
}

func (b *wfBuilder) step(name string, input map[string]string, dependsOn ...string) *wfBuilder {
	b.wf.Spec.Steps = append(b.wf.Spec.Steps, v1alpha1.WorkflowStep{Name: name, Image: "agent:1", Input: input, DependsOn: dependsOn})
	return b
}

func (b *wfBuilder) retries(limit, backoffSeconds int32) *wfBuilder {
	last := &b.wf.Spec.Steps[len(b.wf.Spec.Steps)-1]
	last.Retries = &v1alpha1.RetryPolicy{Limit: limit, BackoffSeconds: new(backoffSeconds), MaxBackoffSeconds: new(int32(300))}
	return b
}

func (b *wfBuilder) input(kv map[string]string) *wfBuilder { b.wf.Spec.Input = kv; return b }

func (b *wfBuilder) timeout(seconds int64) *wfBuilder {
	b.wf.Spec.TimeoutSeconds = &seconds
	return b
}

// started gives the workflow the status of a first reconcile at t0.
func (b *wfBuilder) started() *wfBuilder {
	b.wf.Status.Phase = v1alpha1.WorkflowRunning
	b.wf.Status.StartTime = new(metav1.NewTime(t0))
	return b
}

func (b *wfBuilder) obj() *v1alpha1.Workflow { return b.wf }

// task returns the AgentTask of attempt of step in phase, created at t0.
func task(wf *v1alpha1.Workflow, step string, attempt int32, phase v1alpha1.TaskPhase, output map[string]string) *v1alpha1.AgentTask {
	for i, s := range wf.Spec.Steps {
		if s.Name != step {
			continue
		}
		t := buildTask(wf, i, attempt, nil)
		t.UID = types.UID(t.Name)
		t.CreationTimestamp = metav1.NewTime(t0)
		t.Status.Phase = phase
		t.Status.Output = output
		if phase.IsTerminal() {
			t.Status.CompletionTime = new(metav1.NewTime(t0.Add(10 * time.Second)))
		}
		if phase == v1alpha1.TaskFailed {
			t.Status.Message = "exit code 1"
		}
		return t
	}
	panic("no step " + step)
}

func observe(wf *v1alpha1.Workflow, now time.Time, tasks ...*v1alpha1.AgentTask) *observation {
	obs := &observation{wf: wf, now: now, budget: DefaultBudget, tasks: map[string]*v1alpha1.AgentTask{}, lost: map[string]bool{}}
	obs.graph, obs.invalid = validateSpec(&wf.Spec)
	for _, t := range tasks {
		obs.tasks[t.Name] = t
	}
	return obs
}
