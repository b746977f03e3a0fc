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
	tests := []struct {
		name   string
		d      *appsv1.Deployment
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Rollout(tt.d, tt.wrote)
			assert.Equal(t, tt.phase, got.Phase)
			assert.Equal(t, tt.state, got.State)
			assert.Equal(t, tt.reason, got.Reason)
			assert.Contains(t, got.Message, tt.msg)
		})
	}
}
