package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tasks"
)

// stageConcluded: the floor task's status write is sent (once, whichever of
// its pod or its Job showed the end first).
const stageConcluded = "concluded"

// FloorThroughput is the least any controller of the AgentTask API can cost
// the cluster: the same n AgentTasks, created in the baseline namespace (out
// of the tasks manager's sight), where the harness is the controller with
// nothing in between. Each create worker creates the task's Job (the
// manager's own, owner reference included) the moment the task exists. The
// harness writes the task's one status, Succeeded and settled, at the first
// of: its watch shows the pod Succeeded (every container exited 0), or the
// Job Complete. The tasks manager concludes a task from its pod too, so the
// floor must be allowed to, or managed/floor would compare unlike things. No
// cache, queue, pod GET, Event or intermediate phase. The ratio
// floor/baseline is what the AgentTask objects alone cost over plain Jobs on
// this cluster; a throughput goal below it is out of any controller's reach.
func FloorThroughput(ctx context.Context, e *Env, run string, n, workers int, timeout time.Duration) (Throughput, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := newStamps()
	sel := RunLabel + "=" + run
	names := objectNames("bf-"+run, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	defer wg.Wait()
	conclude := func(task, job string, done metav1.Time, at time.Time) {
		if !st.mark(task, stageConcluded, at) {
			return // the other watch was first
		}
		wg.Go(func() {
			if err := finishFloorTask(ctx, e, task, job, done); err != nil && ctx.Err() == nil {
				errs <- err
			}
		})
	}
	err := watchTasks(ctx, e, BaselineNamespace, sel, st)
	if err == nil {
		err = Follow(ctx, func(ctx context.Context) (watch.Interface, error) {
			return e.Kube.BatchV1().Jobs(BaselineNamespace).Watch(ctx, metav1.ListOptions{LabelSelector: sel})
		}, func(ev watch.Event, at time.Time) {
			job, ok := ev.Object.(*batchv1.Job)
			if !ok {
				return
			}
			task := job.Labels[floorTaskLabel]
			if jobCondition(job, batchv1.JobFailed) {
				st.mark(task, stageFailed, at)
			}
			if jobCondition(job, batchv1.JobComplete) {
				done := metav1.Now()
				if job.Status.CompletionTime != nil {
					done = *job.Status.CompletionTime
				}
				conclude(task, job.Name, done, at)
			}
		})
	}
	if err == nil {
		err = Follow(ctx, func(ctx context.Context) (watch.Interface, error) {
			return e.Kube.CoreV1().Pods(BaselineNamespace).Watch(ctx, metav1.ListOptions{LabelSelector: sel})
		}, func(ev watch.Event, at time.Time) {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				return
			}
			task := pod.Labels[floorTaskLabel]
			stampPod(st, task, pod, at)
			if pod.Status.Phase == corev1.PodSucceeded {
				conclude(task, pod.Labels[batchv1.JobNameLabel], podFinished(pod), at)
			}
		})
	}
	if err != nil {
		return Throughput{}, err
	}
	created, wall, err := burst(ctx, e, st, names, workers, timeout, func(ctx context.Context, name string) error {
		task, err := e.Sched.SchedulerV1alpha1().AgentTasks(BaselineNamespace).Create(ctx, benchTask(BaselineNamespace, name, run), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		_, err = e.Kube.BatchV1().Jobs(BaselineNamespace).Create(ctx, floorJob(task, run), metav1.CreateOptions{})
		return err
	})
	select {
	case floorErr := <-errs:
		return Throughput{}, floorErr
	default:
	}
	if err != nil {
		return Throughput{}, fmt.Errorf("floor: %w", err)
	}
	return result("AgentTask floor", st, names, created, wall, stagePodRunning), nil
}

// podFinished is when pod's last container terminated, or now when the pod
// does not say.
func podFinished(pod *corev1.Pod) metav1.Time {
	var last metav1.Time
	for _, c := range pod.Status.ContainerStatuses {
		if t := c.State.Terminated; t != nil && last.Before(&t.FinishedAt) {
			last = t.FinishedAt
		}
	}
	if last.IsZero() {
		return metav1.Now()
	}
	return last
}

// floorTaskLabel names a floor Job's task (Job names may differ from task names).
const floorTaskLabel = "bench.opsnorth.io/task"

// floorJob is the Job the tasks manager builds for task, labelled with the
// run so that the harness's watches select it.
func floorJob(task *v1alpha1.AgentTask, run string) *batchv1.Job {
	job := tasks.BuildJob(task, tasks.DefaultConfig(), nil)
	for _, l := range []map[string]string{job.Labels, job.Spec.Template.Labels} {
		l[RunLabel] = run
		l[floorTaskLabel] = task.Name
	}
	return job
}

// finishFloorTask writes the floor task's only status: Succeeded and settled,
// with its Job and completion time.
func finishFloorTask(ctx context.Context, e *Env, task, job string, done metav1.Time) error {
	patch, err := json.Marshal(map[string]any{"status": v1alpha1.AgentTaskStatus{
		Phase:          v1alpha1.TaskSucceeded,
		JobName:        job,
		CompletionTime: &done,
		Settled:        true,
	}})
	if err != nil {
		return err
	}
	_, err = e.Sched.SchedulerV1alpha1().AgentTasks(BaselineNamespace).Patch(ctx, task, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("floor task %s: status: %w", task, err)
	}
	return nil
}

func jobCondition(job *batchv1.Job, typ batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
