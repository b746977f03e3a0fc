package bench

import (
	"context"
	"fmt"
	"slices"
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

// Hops is the step-hop latency of W sequential workflows of StepsPerWorkflow steps.
type Hops struct {
	Workflows int `json:"workflows"`
	Steps     int `json:"steps"`
	// Hop is step k's AgentTask seen Succeeded → step k+1's AgentTask seen ADDED,
	// both on the harness's watch (local receive times).
	Hop Dist `json:"hop"`
	// WallSeconds runs from the first create to the last workflow seen Succeeded.
	WallSeconds float64 `json:"wallSeconds"`
	// Duration is create → workflow Succeeded per workflow.
	Duration Dist `json:"duration"`
}

func stepKey(wf string, step int) string { return wf + "/" + strconv.Itoa(step) }

// WorkflowHops creates w workflows of StepsPerWorkflow steps at once and
// measures every hop from one step's task to the next.
func WorkflowHops(ctx context.Context, e *Env, run string, w, workers int, timeout time.Duration) (Hops, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := newStamps()
	names := objectNames("bw-"+run, w)
	mine := map[string]bool{}
	for _, n := range names {
		mine[n] = true
	}
	err := Follow(ctx, func(ctx context.Context) (watch.Interface, error) {
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
		st.mark(key, "added", at)
		if t.Status.Phase == v1alpha1.TaskSucceeded {
			st.mark(key, "succeeded", at)
		}
	})
	if err == nil {
		err = Follow(ctx, func(ctx context.Context) (watch.Interface, error) {
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
	if err != nil {
		return Hops{}, err
	}
	_, wall, err := burst(ctx, e, st, names, workers, timeout, func(ctx context.Context, name string) error {
		_, err := e.Sched.SchedulerV1alpha1().Workflows(TaskNamespace).Create(ctx, benchWorkflow(name, run), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return Hops{}, fmt.Errorf("workflows: %w", err)
	}
	hops, err := hopsOf(st, names)
	if err != nil {
		return Hops{}, err
	}
	return Hops{
		Workflows:   w,
		Steps:       StepsPerWorkflow,
		Hop:         Summarize(hops),
		WallSeconds: wall.Seconds(),
		Duration:    Summarize(st.between(names, stageCreate, stageDone)),
	}, nil
}

// benchWorkflow runs StepsPerWorkflow steps s0..s4 in list order.
func benchWorkflow(name, run string) *v1alpha1.Workflow {
	wf := &v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: TaskNamespace, Labels: map[string]string{RunLabel: run}},
		Spec:       v1alpha1.WorkflowSpec{UserID: benchUser(run)},
	}
	for i := range StepsPerWorkflow {
		wf.Spec.Steps = append(wf.Spec.Steps, v1alpha1.WorkflowStep{
			Name:  "s" + strconv.Itoa(i),
			Image: "registry.example/bench/agent:1",
		})
	}
	return wf
}

// HopPair is one repetition of the hop scenario: the workflows (managed) and
// the harness's chains (baseline, ChainHops) of the same size.
type HopPair struct {
	Rep           int  `json:"rep"`
	BaselineFirst bool `json:"baselineFirst"`
	Managed       Hops `json:"managed"`
	Baseline      Hops `json:"baseline"`
	// P99Ratio is the managed hop p99 over the baseline's.
	P99Ratio float64 `json:"p99Ratio"`
	// Writes are the workflows manager's requests during the managed run.
	Writes Writes `json:"writes"`
}

// runHops runs the hop scenario cfg.Repeats times, alternating which side
// goes first (rep 0 baseline first), and records the medians.
func runHops(ctx context.Context, e *Env, cfg Config, base string, rep *Report) error {
	var p99s, baseP99s, ratios []float64
	for i := range cfg.Repeats {
		p := HopPair{Rep: i, BaselineFirst: i%2 == 0}
		run := fmt.Sprintf("%sh%d", base, i)
		baseline := func() (err error) {
			p.Baseline, err = ChainHops(ctx, e, run+"c", cfg.Workflows, cfg.Workers, cfg.Timeout)
			if err != nil {
				return fmt.Errorf("hop baseline: %w", err)
			}
			return nil
		}
		managed := func() error {
			before, err := RestCounts(ctx, e.Managers["workflows"])
			if err != nil {
				return err
			}
			if p.Managed, err = WorkflowHops(ctx, e, run+"w", cfg.Workflows, cfg.Workers, cfg.Timeout); err != nil {
				return err
			}
			after, err := RestCounts(ctx, e.Managers["workflows"])
			d := diff(after, before)
			p.Writes = Writes{Manager: "workflows", Methods: d, Writes: writes(d), PerUnit: ratio(writes(d), float64(cfg.Workflows)), Unit: "workflow"}
			return err
		}
		steps := []func() error{managed, baseline}
		if p.BaselineFirst {
			slices.Reverse(steps)
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return err
			}
		}
		p.P99Ratio = ratio(p.Managed.Hop.P99Ms, p.Baseline.Hop.P99Ms)
		p99s, baseP99s, ratios = append(p99s, p.Managed.Hop.P99Ms), append(baseP99s, p.Baseline.Hop.P99Ms), append(ratios, p.P99Ratio)
		rep.Hops = append(rep.Hops, p)
	}
	rep.HopP99Median, rep.HopBaselineP99Median, rep.HopP99RatioMedian = Median(p99s), Median(baseP99s), Median(ratios)
	return nil
}
