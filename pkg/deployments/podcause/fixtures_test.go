package podcause

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// podWrapper builds the pods of the tests as the scheduler and kubelet
// leave them.
type podWrapper struct{ corev1.Pod }

func makePod(name string) *podWrapper {
	return &podWrapper{corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team",
			Labels: map[string]string{"app": "web", "extra": "dropped"}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "ghcr.io/opsnorth/web:1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}}
}

func (p *podWrapper) unschedulable(msg string) *podWrapper {
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled,
		Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: msg, LastTransitionTime: metav1.Now()})
	return p
}

func (p *podWrapper) container(cs corev1.ContainerStatus) *podWrapper {
	if cs.Name == "" {
		cs.Name = "web"
	}
	cs.Image, cs.ImageID, cs.ContainerID = "ghcr.io/opsnorth/web:1", "sha256:abc", "containerd://123"
	p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, cs)
	return p
}

func (p *podWrapper) waiting(reason, msg string) *podWrapper {
	return p.container(corev1.ContainerStatus{State: corev1.ContainerState{
		Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}})
}

func (p *podWrapper) initWaiting(reason, msg string) *podWrapper {
	p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, corev1.ContainerStatus{Name: "migrate",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}})
	return p
}

func (p *podWrapper) running(ready bool) *podWrapper {
	p.Status.Phase = corev1.PodRunning
	return p.container(corev1.ContainerStatus{Ready: ready, Started: ptr.To(true),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}})
}

// crashed: the container exited with code and reason and was restarted;
// state is its state since (waiting in CrashLoopBackOff, running, exited).
func (p *podWrapper) crashed(restarts int32, code int32, reason, msg string, state corev1.ContainerState) *podWrapper {
	p.Status.Phase = corev1.PodRunning
	return p.container(corev1.ContainerStatus{RestartCount: restarts, State: state,
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, Message: msg, StartedAt: metav1.Now(), FinishedAt: metav1.Now()}}})
}

func (p *podWrapper) deleting() *podWrapper {
	p.DeletionTimestamp = ptr.To(metav1.Now())
	return p
}

func (p *podWrapper) phase(phase corev1.PodPhase) *podWrapper {
	p.Status.Phase = phase
	return p
}

func (p *podWrapper) obj() *corev1.Pod { return &p.Pod }

var backOff = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
	Message: "back-off 40s restarting failed container=web pod=web-5d9c7-aaaaa_team(uid)"}}

const (
	schedMsg = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
	pullMsg  = `rpc error: code = NotFound desc = failed to pull and unpack image "ghcr.io/opsnorth/web:1": not found`
)
