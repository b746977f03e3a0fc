package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"opsnorth.io/scheduler/pkg/labelkeys"
)

// stagePodAdded: the pod's first event on the harness's pod watch (ADDED).
const stagePodAdded = "pod-added"

// stepTasks maps a step key (stepKey) to the name of the AgentTask or Job
// that runs it, as the harness's watch of them tells.
type stepTasks struct {
	mu sync.Mutex
	m  map[string]string
}

func newStepTasks() *stepTasks { return &stepTasks{m: map[string]string{}} }

func (s *stepTasks) set(step, task string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[step] = task
}

func (s *stepTasks) get(step string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[step]
}

// watchHopPods stamps, by the AgentTask (or floor Job) each pod in ns that
// selector matches runs, when the pod was first seen (stagePodAdded) and
// seen Succeeded (stagePodDone). onDone, when set, is called once per pod
// seen Succeeded, with its task and the receive time.
func watchHopPods(ctx context.Context, e *Env, ns, selector string, st *stamps, onDone func(task string, pod *corev1.Pod, at time.Time)) error {
	return Follow(ctx, func(ctx context.Context) (watch.Interface, error) {
		return e.Kube.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: selector})
	}, func(ev watch.Event, at time.Time) {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			return
		}
		task := pod.Labels[labelkeys.AgentTask]
		if task == "" {
			return
		}
		st.mark(task, stagePodAdded, at)
		if pod.Status.Phase == corev1.PodSucceeded && st.mark(task, stagePodDone, at) && onDone != nil {
			onDone(task, pod, at)
		}
	})
}

// podHopsOf is every pod-level hop of the chains or workflows names: step
// k's pod seen Succeeded → step k+1's pod seen ADDED. taskOf names the task
// (the key of the pod stamps) that runs a step key.
func podHopsOf(st *stamps, names []string, steps int, taskOf func(step string) string) ([]time.Duration, error) {
	var hops []time.Duration
	for _, name := range names {
		for k := range steps - 1 {
			a, b := taskOf(stepKey(name, k)), taskOf(stepKey(name, k+1))
			done, okA := st.get(a, stagePodDone)
			next, okB := st.get(b, stagePodAdded)
			if a == "" || b == "" || !okA || !okB {
				return nil, fmt.Errorf("%s: the pod of step %d or %d not seen on the watch", name, k, k+1)
			}
			hops = append(hops, next.Sub(done))
		}
	}
	return hops, nil
}
