package podcause

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	toolscache "k8s.io/client-go/tools/cache"

	"opsnorth.io/scheduler/pkg/conditions"
)

// Unfinished is the field selector of a pod cache that leaves out the pods
// that ended (evicted, or stopped on a node shutdown): their ReplicaSet
// replaces them, so they are no cause (OfPod), and they leave the cache
// with a delete.
var Unfinished = fields.AndSelectors(
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
).String()

// Transform is a pod cache's transform that trims each pod (Trim), keeping
// the labels of labelKeys; other objects pass unchanged.
func Transform(labelKeys ...string) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return obj, nil
		}
		return Trim(pod, labelKeys...), nil
	}
}

// Trim keeps what OfPod reads and the labels of labelKeys (each present,
// "" where the pod has none): the pod's identity, the PodScheduled=False
// condition and, per container, its name, readiness, restart count and
// states without times, messages bounded. A pod of a running app is a few
// hundred bytes.
func Trim(pod *corev1.Pod, labelKeys ...string) *corev1.Pod {
	labels := make(map[string]string, len(labelKeys))
	for _, k := range labelKeys {
		labels[k] = pod.Labels[k]
	}
	out := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ResourceVersion: pod.ResourceVersion,
		CreationTimestamp: pod.CreationTimestamp, DeletionTimestamp: pod.DeletionTimestamp, Labels: labels,
	}}
	out.Status.Phase = pod.Status.Phase
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			out.Status.Conditions = append(out.Status.Conditions, corev1.PodCondition{Type: c.Type, Status: c.Status,
				Reason: c.Reason, Message: conditions.Truncate(c.Message, MaxMessage)})
		}
	}
	out.Status.InitContainerStatuses = trimContainers(pod.Status.InitContainerStatuses)
	out.Status.ContainerStatuses = trimContainers(pod.Status.ContainerStatuses)
	return out
}

func trimContainers(in []corev1.ContainerStatus) []corev1.ContainerStatus {
	if len(in) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(in))
	for i, cs := range in {
		out[i] = corev1.ContainerStatus{Name: cs.Name, Ready: cs.Ready, RestartCount: cs.RestartCount,
			State: trimState(cs.State), LastTerminationState: trimState(cs.LastTerminationState)}
	}
	return out
}

func trimState(st corev1.ContainerState) corev1.ContainerState {
	var out corev1.ContainerState
	if w := st.Waiting; w != nil {
		out.Waiting = &corev1.ContainerStateWaiting{Reason: w.Reason, Message: conditions.Truncate(w.Message, MaxMessage)}
	}
	if st.Running != nil {
		out.Running = &corev1.ContainerStateRunning{}
	}
	if t := st.Terminated; t != nil {
		out.Terminated = &corev1.ContainerStateTerminated{ExitCode: t.ExitCode, Reason: t.Reason, Message: conditions.Truncate(t.Message, MaxMessage)}
	}
	return out
}
