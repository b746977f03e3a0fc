package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// StepsPerWorkflow is the length of the benchmark's workflows.
const StepsPerWorkflow = 5

// Hops is the step-hop latency of W sequential workflows (or chains) of
// StepsPerWorkflow steps.
type Hops struct {
	Workflows int `json:"workflows"`
	Steps     int `json:"steps"`
	// Hop is step k's AgentTask seen Succeeded → step k+1's AgentTask seen ADDED,
	// both on the harness's watch (local receive times). The floor chain has
	// no AgentTask: N is 0.
	Hop Dist `json:"hop"`
	// PodHop is step k's pod seen Succeeded → step k+1's pod seen ADDED, on
	// the harness's pod watch: the hop a user waits through, Job controller
	// and task controller included.
	PodHop Dist `json:"podHop"`
	// WallSeconds runs from the first create to the last workflow seen Succeeded.
	WallSeconds float64 `json:"wallSeconds"`
	// Duration is create → workflow Succeeded per workflow.
	Duration Dist `json:"duration"`
	// CPUSeconds and Profiles are as in Throughput.
	CPUSeconds map[string]float64 `json:"cpuSeconds,omitempty"`
	Profiles   map[string]string  `json:"profiles,omitempty"`
}

func stepKey(wf string, step int) string { return wf + "/" + strconv.Itoa(step) }

// WorkflowHops creates w workflows of StepsPerWorkflow steps at once and
// measures every hop from one step's task to the next.
func WorkflowHops(ctx context.Context, e *Env, run string, w, workers int, timeout time.Duration) (Hops, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := newStamps()
	steps := newStepTasks()
	names := objectNames("bw-"+run, w)
	mine := map[string]bool{}
	for _, n := range names {
		mine[n] = true
	}
	err := watchHopPods(ctx, e, TaskNamespace, labelkeys.UserID+"="+benchUser(run), st, nil)
	if err != nil {
		return Hops{}, err
	}
	err = Follow(ctx, func(ctx context.Context) (watch.Interface, error) {
		return e.Sched.SchedulerV1alpha1().AgentTasks(TaskNamespace).Watch(ctx, metav1.ListOptions{LabelSelector: labelkeys.Workflow})
	}, func(ev watch.Event, at time.Time) {
		t, ok := ev.Object.(*v1alpha1.AgentTask)
		if !ok || !mine[t.Labels[labelkeys.Workflow]] {
			return
		}
		digits, ok := strings.CutPrefix(t.Labels[labelkeys.Step], "s")
		step, err := strconv.Atoi(digits)
		if !ok || err != nil {
			return
		}
		key := stepKey(t.Labels[labelkeys.Workflow], step)
		steps.set(key, t.Name)
		st.mark(key, "added", at)
		if t.Status.Phase == v1alpha1.TaskSucceeded {
			st.mark(key, "succeeded", at)
		}
	})
	if err == nil {
		err = watchWorkflowEnds(ctx, e, run, st)
	}
	if err != nil {
		return Hops{}, err
	}
	_, wall, err := burst(ctx, e, st, names, workers, timeout, func(ctx context.Context, name string) error {
		_, err := e.Sched.SchedulerV1alpha1().Workflows(TaskNamespace).Create(ctx, benchWorkflow(name, run, StepsPerWorkflow), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return Hops{}, fmt.Errorf("workflows: %w", err)
	}
	hops, err := hopsOf(st, names)
	if err != nil {
		return Hops{}, err
	}
	podHops, err := podHopsOf(st, names, StepsPerWorkflow, steps.get)
	if err != nil {
		return Hops{}, err
	}
	return Hops{
		Workflows:   w,
		Steps:       StepsPerWorkflow,
		Hop:         Summarize(hops),
		PodHop:      Summarize(podHops),
		WallSeconds: wall.Seconds(),
		Duration:    Summarize(st.between(names, stageCreate, stageDone)),
	}, nil
}

// benchWorkflow runs steps steps s0, s1... in list order.
func benchWorkflow(name, run string, steps int) *v1alpha1.Workflow {
	wf := &v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: TaskNamespace, Labels: map[string]string{RunLabel: run}},
		Spec:       v1alpha1.WorkflowSpec{UserID: benchUser(run)},
	}
	for i := range steps {
		wf.Spec.Steps = append(wf.Spec.Steps, v1alpha1.WorkflowStep{
			Name:  "s" + strconv.Itoa(i),
			Image: "registry.example/bench/agent:1",
		})
	}
	return wf
}

// watchWorkflowEnds stamps stageDone or stageFailed for each workflow of
// run as the harness's watch sees it end.
func watchWorkflowEnds(ctx context.Context, e *Env, run string, st *stamps) error {
	return Follow(ctx, func(ctx context.Context) (watch.Interface, error) {
		return e.Sched.SchedulerV1alpha1().Workflows(TaskNamespace).Watch(ctx, metav1.ListOptions{LabelSelector: RunLabel + "=" + run})
	}, func(ev watch.Event, at time.Time) {
		if wf, ok := ev.Object.(*v1alpha1.Workflow); ok {
			switch wf.Status.Phase {
			case v1alpha1.WorkflowSucceeded:
				st.mark(wf.Name, stageDone, at)
			case v1alpha1.WorkflowFailed:
				st.mark(wf.Name, stageFailed, at)
			}
		}
	})
}
