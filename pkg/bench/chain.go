package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// chainLabel and chainStepLabel mark the hop baseline's tasks.
const (
	chainLabel     = "bench.opsnorth.io/chain"
	chainStepLabel = "bench.opsnorth.io/chain-step"
)

// ChainHops is the hop scenario's baseline: w chains of StepsPerWorkflow
// AgentTasks where the harness itself is the "workflow controller". It
// watches the tasks and creates step k+1 the moment it sees step k
// Succeeded, with no informer, queue, reconcile or status write between. The
// tasks manager runs every task as in the managed scenario, so a hop here
// is what the API server and the watch path cost under the same load; the
// managed hop minus this is the workflows manager's share.
func ChainHops(ctx context.Context, e *Env, run string, w, workers int, timeout time.Duration) (Hops, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := newStamps()
	names := objectNames("bc-"+run, w)
	if err := watchHopPods(ctx, e, TaskNamespace, labelkeys.UserID+"="+benchUser(run), st, nil); err != nil {
		return Hops{}, err
	}
	errs := make(chan error, w*StepsPerWorkflow)
	var wg sync.WaitGroup
	defer wg.Wait()
	create := func(ctx context.Context, chain string, step int) error {
		_, err := e.Sched.SchedulerV1alpha1().AgentTasks(TaskNamespace).Create(ctx, chainTask(chain, run, step), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
	err := Follow(ctx, func(ctx context.Context) (watch.Interface, error) {
		return e.Sched.SchedulerV1alpha1().AgentTasks(TaskNamespace).Watch(ctx, metav1.ListOptions{LabelSelector: chainLabel})
	}, func(ev watch.Event, at time.Time) {
		t, ok := ev.Object.(*v1alpha1.AgentTask)
		if !ok || t.Labels[RunLabel] != run {
			return
		}
		chain := t.Labels[chainLabel]
		step, err := strconv.Atoi(t.Labels[chainStepLabel])
		if err != nil {
			return
		}
		key := stepKey(chain, step)
		st.mark(key, "added", at)
		switch t.Status.Phase {
		case v1alpha1.TaskSucceeded:
		case v1alpha1.TaskFailed, v1alpha1.TaskTimeout:
			st.mark(chain, stageFailed, at)
			return
		default:
			return
		}
		if _, seen := st.get(key, "succeeded"); seen {
			return
		}
		st.mark(key, "succeeded", at)
		if step == StepsPerWorkflow-1 {
			st.mark(chain, stageDone, at)
			return
		}
		wg.Go(func() {
			if err := create(ctx, chain, step+1); err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("chain %s step %d: %w", chain, step+1, err)
			}
		})
	})
	if err != nil {
		return Hops{}, err
	}
	wall, err := startChains(ctx, e, st, names, workers, timeout, errs, create)
	if err != nil {
		return Hops{}, fmt.Errorf("chains: %w", err)
	}
	hops, err := hopsOf(st, names)
	if err != nil {
		return Hops{}, err
	}
	podHops, err := podHopsOf(st, names, StepsPerWorkflow, chainStepName)
	if err != nil {
		return Hops{}, err
	}
	return Hops{Workflows: w, Steps: StepsPerWorkflow, Hop: Summarize(hops), PodHop: Summarize(podHops), WallSeconds: wall.Seconds(),
		Duration: Summarize(st.between(names, stageCreate, stageDone))}, nil
}

// chainTask is step of a baseline chain: the bench task's spec, named and
// labelled by chain and step.
func chainTask(chain, run string, step int) *v1alpha1.AgentTask {
	t := benchTask(TaskNamespace, chainStepName(stepKey(chain, step)), run)
	t.Labels[chainLabel] = chain
	t.Labels[chainStepLabel] = strconv.Itoa(step)
	return t
}

// chainStepName is the name of the task (or floor Job) that runs a chain's
// step key: "<chain>-s<step>".
func chainStepName(key string) string {
	chain, step, _ := strings.Cut(key, "/")
	return chain + "-s" + step
}

// hopsOf is every hop of the chains or workflows names: step k seen
// Succeeded → step k+1 seen ADDED.
func hopsOf(st *stamps, names []string) ([]time.Duration, error) {
	var hops []time.Duration
	for _, name := range names {
		for k := range StepsPerWorkflow - 1 {
			done, okA := st.get(stepKey(name, k), "succeeded")
			next, okB := st.get(stepKey(name, k+1), "added")
			if !okA || !okB {
				return nil, fmt.Errorf("%s: step %d or %d not seen on the watch", name, k, k+1)
			}
			hops = append(hops, next.Sub(done))
		}
	}
	return hops, nil
}

// startChains creates step 0 of every chain in names and waits until all
// are done; an error a later step's create sent on errs comes first.
func startChains(ctx context.Context, e *Env, st *stamps, names []string, workers int, timeout time.Duration,
	errs <-chan error, create func(ctx context.Context, chain string, step int) error) (time.Duration, error) {
	_, wall, err := burst(ctx, e, st, names, workers, timeout, func(ctx context.Context, chain string) error {
		return create(ctx, chain, 0)
	})
	select {
	case chainErr := <-errs:
		return 0, chainErr
	default:
	}
	return wall, err
}
