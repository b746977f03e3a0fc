package agents

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/deployments/podcause"
	"opsnorth.io/scheduler/pkg/refusal"
)

func TestRollout(t *testing.T) {
	dep := func(ready int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: ready,
				AvailableReplicas: ready, Conditions: conds}}
	}
	stale := dep(2)
	stale.Generation = 3
	staleFailing := dep(0, appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue,
		Reason: "FailedCreate", Message: `pods "a-1" is forbidden: exceeded quota: q, requested: cpu=1`})
	staleFailing.Generation = 3
	pullMsg := `failed to pull and unpack image "unreachable.invalid/agent:1": dial tcp: lookup unreachable.invalid: no such host`
	pulling := []*corev1.Pod{
		waitingPod("a-5d9c7-aaaaa", "ImagePullBackOff", `Back-off pulling image "unreachable.invalid/agent:1": ErrImagePull: `+pullMsg),
		waitingPod("a-5d9c7-bbbbb", "ErrImagePull", pullMsg),
	}
	crashing := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a-5d9c7-ccccc"}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "agent", RestartCount: 3,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}}}}}}
	tests := []struct {
		name   string
		d      *appsv1.Deployment
		pods   []*corev1.Pod
		wrote  bool
		phase  ossav1.AgentPhase
		state  conditions.State
		reason string
		msg    string
	}{
		{name: "no Deployment yet", phase: ossav1.AgentProgressing, state: conditions.InProgress, reason: ReasonProgressing,
			msg: "waiting for the Deployment"},
		{name: "rolled out", d: dep(2), phase: ossav1.AgentReady, state: conditions.Current, reason: ReasonReady, msg: "2/2 replicas ready"},
		{name: "rolled out but just written", d: dep(2), wrote: true, phase: ossav1.AgentProgressing, state: conditions.InProgress,
			reason: ReasonProgressing, msg: "2/2 replicas ready; rolling out"},
		{name: "spec change not observed", d: stale, phase: ossav1.AgentProgressing, state: conditions.InProgress,
			reason: ReasonProgressing, msg: "rolling out"},
		{name: "one not ready", d: dep(1), phase: ossav1.AgentProgressing, state: conditions.InProgress, reason: ReasonProgressing,
			msg: "1/2 replicas ready; rolling out"},
		{name: "quota", d: dep(0, appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue,
			Reason: "FailedCreate", Message: `pods "a-1" is forbidden: exceeded quota: q, requested: cpu=1`}),
			phase: ossav1.AgentProgressing, state: conditions.InProgress, reason: refusal.ReasonQuotaExceeded,
			msg: "0/2 replicas ready; pods cannot be created: pods \"a-1\" is forbidden: exceeded quota"},
		{name: "pod security", d: dep(0, appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue,
			Message: `pods "a-1" is forbidden: violates PodSecurity "restricted:latest"`}),
			phase: ossav1.AgentProgressing, state: conditions.InProgress, reason: refusal.ReasonAdmissionDenied, msg: "violates PodSecurity"},
		{name: "deadline", d: dep(1, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
			Reason: ReasonProgressDeadlineExceeded, Message: `ReplicaSet "a-1" has timed out progressing.`}),
			phase: ossav1.AgentStalled, state: conditions.Stalled, reason: ReasonProgressDeadlineExceeded,
			msg: `1/2 replicas ready; rollout stalled: ReplicaSet "a-1" has timed out progressing.`},

		// What keeps the pods from running ready.
		{name: "image pull failing", d: dep(0), pods: pulling, phase: ossav1.AgentProgressing, state: conditions.InProgress,
			reason: podcause.ReasonImagePullFailed,
			msg:    "0/2 replicas ready; pod a-5d9c7-aaaaa cannot pull the image of container agent: " + pullMsg + " (and 1 more pod)"},
		{name: "crash looping", d: dep(1), pods: []*corev1.Pod{crashing}, phase: ossav1.AgentProgressing, state: conditions.InProgress,
			reason: podcause.ReasonCrashLooping, msg: "1/2 replicas ready; pod a-5d9c7-ccccc: container agent is crash looping, last exit code 3 (Error)"},
		{name: "pods of a spec not observed yet still tell", d: stale, pods: pulling, phase: ossav1.AgentProgressing,
			state: conditions.InProgress, reason: podcause.ReasonImagePullFailed, msg: "cannot pull the image of container agent"},
		{name: "a replica failure of an earlier spec is no news", d: staleFailing, phase: ossav1.AgentProgressing,
			state: conditions.InProgress, reason: ReasonProgressing, msg: "0/2 replicas ready; rolling out"},
		{name: "pods that cannot be created before the pods' causes", pods: pulling,
			d: dep(0, appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue,
				Reason: "FailedCreate", Message: `pods "a-1" is forbidden: exceeded quota: q, requested: cpu=1`}),
			phase: ossav1.AgentProgressing, state: conditions.InProgress, reason: refusal.ReasonQuotaExceeded,
			msg: "0/2 replicas ready; pods cannot be created: pods \"a-1\" is forbidden: exceeded quota"},
		{name: "just written: the pods are of the spec before", d: dep(0), pods: pulling, wrote: true,
			phase: ossav1.AgentProgressing, state: conditions.InProgress, reason: ReasonProgressing, msg: "0/2 replicas ready; rolling out"},
		{name: "rolled out: a pod's cause is no news", d: dep(2), pods: pulling, phase: ossav1.AgentReady, state: conditions.Current,
			reason: ReasonReady, msg: "2/2 replicas ready"},
		{name: "deadline names the pods' cause", d: dep(0, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing,
			Status: corev1.ConditionFalse, Reason: ReasonProgressDeadlineExceeded, Message: `ReplicaSet "a-1" has timed out progressing.`}),
			pods: pulling, phase: ossav1.AgentStalled, state: conditions.Stalled, reason: ReasonProgressDeadlineExceeded,
			msg: `0/2 replicas ready; rollout stalled: ReplicaSet "a-1" has timed out progressing.; pod a-5d9c7-aaaaa cannot pull the image`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Rollout(tt.d, tt.pods, tt.wrote)
			assert.Equal(t, tt.phase, got.Phase)
			assert.Equal(t, tt.state, got.State)
			assert.Equal(t, tt.reason, got.Reason)
			assert.Contains(t, got.Message, tt.msg)
		})
	}
}

// waitingPod is a pod whose agent container waits for reason, as the
// kubelet reports it.
func waitingPod(name, reason, msg string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: corev1.PodPending,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "agent",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}}}
}
