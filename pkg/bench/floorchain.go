package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// FloorChainHops is the floor of the hop scenario: w chains of
// StepsPerWorkflow plain Jobs (the tasks manager's Job of the bench task, as
// BaselineJob renders it, in the baseline namespace; no AgentTask at all).
// The harness watches their pods and creates step k+1's Job the moment it
// sees step k's pod Succeeded. Its pod-level hop (Job create → Job
// controller → pod ADDED, plus the watch path) is the least any design that
// runs one Job per step can reach on this cluster; Hop (task level) stays
// empty. A chain is done when its last pod Succeeded.
func FloorChainHops(ctx context.Context, e *Env, run string, w, workers int, timeout time.Duration) (Hops, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := newStamps()
	names := objectNames("bfc-"+run, w)
	errs := make(chan error, w*StepsPerWorkflow)
	var wg sync.WaitGroup
	defer wg.Wait()
	create := func(ctx context.Context, chain string, step int) error {
		_, err := e.Kube.BatchV1().Jobs(BaselineNamespace).Create(ctx, floorChainJob(chain, run, step), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
	err := watchHopPods(ctx, e, BaselineNamespace, RunLabel+"="+run, st, func(_ string, pod *corev1.Pod, at time.Time) {
		chain := pod.Labels[chainLabel]
		step, err := strconv.Atoi(pod.Labels[chainStepLabel])
		if err != nil || chain == "" {
			return
		}
		if step == StepsPerWorkflow-1 {
			st.mark(chain, stageDone, at)
			return
		}
		wg.Go(func() {
			if err := create(ctx, chain, step+1); err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("floor chain %s step %d: %w", chain, step+1, err)
			}
		})
	})
	if err == nil {
		err = Follow(ctx, func(ctx context.Context) (watch.Interface, error) {
			return e.Kube.BatchV1().Jobs(BaselineNamespace).Watch(ctx, metav1.ListOptions{LabelSelector: RunLabel + "=" + run})
		}, func(ev watch.Event, at time.Time) {
			if job, ok := ev.Object.(*batchv1.Job); ok && jobCondition(job, batchv1.JobFailed) {
				st.mark(job.Labels[chainLabel], stageFailed, at)
			}
		})
	}
	if err != nil {
		return Hops{}, err
	}
	wall, err := startChains(ctx, e, st, names, workers, timeout, errs, create)
	if err != nil {
		return Hops{}, fmt.Errorf("floor chains: %w", err)
	}
	podHops, err := podHopsOf(st, names, StepsPerWorkflow, chainStepName)
	if err != nil {
		return Hops{}, err
	}
	return Hops{Workflows: w, Steps: StepsPerWorkflow, PodHop: Summarize(podHops), WallSeconds: wall.Seconds(),
		Duration: Summarize(st.between(names, stageCreate, stageDone))}, nil
}

// floorChainJob is step of a floor chain: the baseline Job of the bench task
// named "<chain>-s<step>", its pod labelled by chain and step.
func floorChainJob(chain, run string, step int) *batchv1.Job {
	job := BaselineJob(chainStepName(stepKey(chain, step)), run)
	for _, l := range []map[string]string{job.Labels, job.Spec.Template.Labels} {
		l[chainLabel] = chain
		l[chainStepLabel] = strconv.Itoa(step)
	}
	return job
}
