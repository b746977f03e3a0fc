package tasks

import (
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// finishedPods remembers, per task, the finished pod read from the API
// server after it left the cache (which holds running pods only), until
// the cached task shows the outcome. The Job controller updates the Job
// a few times between the pod finishing and the Job concluding; each update
// reconciles the task, and without this memo each would read the pod again.
// It also remembers the name of each pod that left the cache, so a task
// that never recorded its pod (it finished before a Running write) still
// reads it by name.
type finishedPods struct {
	mu   sync.Mutex
	pods map[types.NamespacedName]*corev1.Pod
	left map[types.NamespacedName]string
}

func newFinishedPods() *finishedPods {
	return &finishedPods{pods: map[types.NamespacedName]*corev1.Pod{}, left: map[types.NamespacedName]string{}}
}

// leave records that task's pod named pod left the cache: it finished or
// was deleted.
func (f *finishedPods) leave(task types.NamespacedName, pod string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.left[task] = pod
}

// unleave forgets the pod that left task's cache: it is gone, and reading
// it again on every reconcile would find nothing new.
func (f *finishedPods) unleave(task types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.left, task)
}

// leftPod returns the name of task's pod that last left the cache, or "".
func (f *finishedPods) leftPod(task types.NamespacedName) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.left[task]
}

// get returns the remembered pod of task if job controls it.
func (f *finishedPods) get(task types.NamespacedName, job *batchv1.Job) *corev1.Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	if pod := f.pods[task]; pod != nil && metav1.IsControlledBy(pod, job) {
		return pod
	}
	return nil
}

// put remembers pod for task once it has finished; a running or pending pod
// may still change and is not remembered.
func (f *finishedPods) put(task types.NamespacedName, pod *corev1.Pod) {
	if pod == nil || (pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed) {
		return
	}
	trimmed, _ := trimPod(pod.DeepCopy())
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods[task] = trimmed.(*corev1.Pod)
}

// forget drops task's pod: the cache shows its outcome, or the task is gone.
func (f *finishedPods) forget(task types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.pods, task)
	delete(f.left, task)
}

// len is the number of remembered pods.
func (f *finishedPods) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pods)
}
