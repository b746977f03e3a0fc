package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/tasks"
)

// Stages of a throughput run's objects.
const (
	stageCreate     = "create"
	stageRunning    = "running"     // the AgentTask's phase is Running (managed only)
	stagePodRunning = "pod-running" // the pod is Running
	stagePodDone    = "pod-done"    // the pod Succeeded
	stageDone       = "done"        // task Succeeded / Job Complete
	stageFailed     = "failed"
)

// Throughput is one burst of N objects created at once and run to the end.
type Throughput struct {
	Kind string `json:"kind"` // AgentTask (managed) or Job (baseline)
	N    int    `json:"n"`
	// CreateSeconds is how long issuing the N creates took.
	CreateSeconds float64 `json:"createSeconds"`
	// WallSeconds runs from the first create to the last object done.
	WallSeconds float64 `json:"wallSeconds"`
	PerSecond   float64 `json:"perSecond"`
	// CreateToRunning is create → the AgentTask's phase Running (managed) or the pod Running (baseline).
	CreateToRunning    Dist `json:"createToRunning"`
	CreateToPodRunning Dist `json:"createToPodRunning"`
	// CreateToPodDone is create → the pod seen Succeeded: what the work itself took.
	CreateToPodDone Dist `json:"createToPodDone"`
	// CreateToDone is create → task Succeeded / Job Complete: what the user waits for.
	CreateToDone Dist `json:"createToDone"`
	// PodDoneToDone is the controller's reaction: pod Succeeded → task Succeeded / Job Complete.
	PodDoneToDone Dist `json:"podDoneToDone"`
	// CPUSeconds is the CPU time (user+system) each process of the local
	// cluster and each manager spent during the burst: on a machine where the
	// cluster is CPU-bound, it shows where the wall time went.
	CPUSeconds map[string]float64 `json:"cpuSeconds,omitempty"`
	// Profiles are the CPU profiles (kube-apiserver and each manager) of the
	// burst's start (--profile), for `go tool pprof`.
	Profiles map[string]string `json:"profiles,omitempty"`
}

// burst creates n objects with workers goroutines, each create stamped just
// before it is sent, then waits until every one is done, timeout passes or
// ctx is cancelled (Ctrl-C).
func burst(ctx context.Context, e *Env, st *stamps, names []string, workers int, timeout time.Duration, create func(context.Context, string) error) (time.Duration, time.Duration, error) {
	start := time.Now()
	work := make(chan string)
	errs := make(chan error, len(names))
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for name := range work {
				st.mark(name, stageCreate, time.Now())
				if err := create(ctx, name); err != nil {
					errs <- fmt.Errorf("create %s: %w", name, err)
				}
			}
		})
	}
	for _, n := range names {
		work <- n
	}
	close(work)
	wg.Wait()
	created := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, err
	}
	deadline := time.Now().Add(timeout)
	for st.count(stageDone) < len(names) {
		if n := st.count(stageFailed); n > 0 {
			return 0, 0, fmt.Errorf("%d objects failed", n)
		}
		if err := e.CheckAlive(); err != nil {
			return 0, 0, err
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("%d of %d done within %s", st.count(stageDone), len(names), timeout)
		}
		select {
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("%d of %d done: %w", st.count(stageDone), len(names), ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return created, st.latest(names, stageDone).Sub(start), nil
}

// watchPods stamps the Running and Succeeded times of the Job pods in ns, by Job name.
func watchPods(ctx context.Context, e *Env, ns, selector string, st *stamps) error {
	return Follow(ctx, func(ctx context.Context) (watch.Interface, error) {
		return e.Kube.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: selector})
	}, func(ev watch.Event, at time.Time) {
		if pod, ok := ev.Object.(*corev1.Pod); ok {
			stampPod(st, pod.Labels[batchv1.JobNameLabel], pod, at)
		}
	})
}

// stampPod stamps key's pod stages from pod's phase.
func stampPod(st *stamps, key string, pod *corev1.Pod, at time.Time) {
	switch pod.Status.Phase {
	case corev1.PodRunning:
		st.mark(key, stagePodRunning, at)
	case corev1.PodSucceeded:
		st.mark(key, stagePodRunning, at)
		st.mark(key, stagePodDone, at)
	}
}

// TaskThroughput creates n AgentTasks at once in the tasks manager's
// namespace and waits until all have Succeeded.
func TaskThroughput(ctx context.Context, e *Env, run string, n, workers int, timeout time.Duration) (Throughput, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := newStamps()
	sel := RunLabel + "=" + run
	names := objectNames("bt-"+run, n)
	err := watchTasks(ctx, e, TaskNamespace, sel, st)
	if err == nil {
		err = watchPods(ctx, e, TaskNamespace, labelkeys.UserID+"="+benchUser(run), st)
	}
	if err != nil {
		return Throughput{}, err
	}
	created, wall, err := burst(ctx, e, st, names, workers, timeout, func(ctx context.Context, name string) error {
		_, err := e.Sched.SchedulerV1alpha1().AgentTasks(TaskNamespace).Create(ctx, benchTask(TaskNamespace, name, run), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return Throughput{}, fmt.Errorf("agent tasks: %w", err)
	}
	return result("AgentTask", st, names, created, wall, stageRunning), nil
}

// watchTasks stamps the phases of the AgentTasks in ns that selector matches.
func watchTasks(ctx context.Context, e *Env, ns, selector string, st *stamps) error {
	return Follow(ctx, func(ctx context.Context) (watch.Interface, error) {
		return e.Sched.SchedulerV1alpha1().AgentTasks(ns).Watch(ctx, metav1.ListOptions{LabelSelector: selector})
	}, func(ev watch.Event, at time.Time) {
		if t, ok := ev.Object.(*v1alpha1.AgentTask); ok {
			stampTask(st, t.Name, t.Status.Phase, at)
		}
	})
}

func stampTask(st *stamps, name string, phase v1alpha1.TaskPhase, at time.Time) {
	switch phase {
	case v1alpha1.TaskRunning:
		st.mark(name, stageRunning, at)
	case v1alpha1.TaskSucceeded:
		st.mark(name, stageRunning, at)
		st.mark(name, stageDone, at)
	case v1alpha1.TaskFailed, v1alpha1.TaskTimeout:
		st.mark(name, stageFailed, at)
	}
}

// JobThroughput is the baseline: n Jobs with the pod spec the tasks manager
// builds, created at once by a plain client-go loop, until all are Complete.
func JobThroughput(ctx context.Context, e *Env, run string, n, workers int, timeout time.Duration) (Throughput, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := newStamps()
	sel := RunLabel + "=" + run
	names := objectNames("bj-"+run, n)
	err := Follow(ctx, func(ctx context.Context) (watch.Interface, error) {
		return e.Kube.BatchV1().Jobs(BaselineNamespace).Watch(ctx, metav1.ListOptions{LabelSelector: sel})
	}, func(ev watch.Event, at time.Time) {
		job, ok := ev.Object.(*batchv1.Job)
		if !ok {
			return
		}
		if jobCondition(job, batchv1.JobComplete) {
			st.mark(job.Name, stageDone, at)
		}
		if jobCondition(job, batchv1.JobFailed) {
			st.mark(job.Name, stageFailed, at)
		}
	})
	if err == nil {
		err = watchPods(ctx, e, BaselineNamespace, sel, st)
	}
	if err != nil {
		return Throughput{}, err
	}
	created, wall, err := burst(ctx, e, st, names, workers, timeout, func(ctx context.Context, name string) error {
		_, err := e.Kube.BatchV1().Jobs(BaselineNamespace).Create(ctx, BaselineJob(name, run), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return Throughput{}, fmt.Errorf("baseline jobs: %w", err)
	}
	return result("Job", st, names, created, wall, stagePodRunning), nil
}

func result(kind string, st *stamps, names []string, created, wall time.Duration, running string) Throughput {
	return Throughput{
		Kind:               kind,
		N:                  len(names),
		CreateSeconds:      created.Seconds(),
		WallSeconds:        wall.Seconds(),
		PerSecond:          ratio(float64(len(names)), wall.Seconds()),
		CreateToRunning:    Summarize(st.between(names, stageCreate, running)),
		CreateToPodRunning: Summarize(st.between(names, stageCreate, stagePodRunning)),
		CreateToPodDone:    Summarize(st.between(names, stageCreate, stagePodDone)),
		CreateToDone:       Summarize(st.between(names, stageCreate, stageDone)),
		PodDoneToDone:      Summarize(st.between(names, stagePodDone, stageDone)),
	}
}

func objectNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%05d", prefix, i)
	}
	return out
}

// benchTask is the AgentTask of the benchmark: no input, so its pod runs for
// the cluster's default pod delay.
func benchTask(ns, name, run string) *v1alpha1.AgentTask {
	return &v1alpha1.AgentTask{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{RunLabel: run}},
		Spec: v1alpha1.AgentTaskSpec{
			TaskID: name,
			UserID: benchUser(run),
			Image:  "registry.example/bench/agent:1",
		},
	}
}

// BaselineJob is the Job the tasks manager would build for the same task,
// rendered by its own builder with the default flags, without the owner
// reference, in the baseline namespace.
func BaselineJob(name, run string) *batchv1.Job {
	job := tasks.BuildJob(benchTask(BaselineNamespace, name, run), tasks.DefaultConfig(), nil)
	job.OwnerReferences = nil
	job.Labels[RunLabel] = run
	job.Spec.Template.Labels[RunLabel] = run
	return job
}

// benchUser is the user of a run's tasks; their pods carry it as a label.
func benchUser(run string) string { return "bench-" + run }
