package agents

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/deployments/children"
	"opsnorth.io/scheduler/pkg/refusal"
)

// maxCauseMessage bounds a message taken from the Deployment's conditions.
const maxCauseMessage = 512

// observeRollout reports the Deployment: its replicas, and phase Ready once
// it rolled out. Right after a write the cache shows the Deployment before
// it: its watch event brings the next reconcile.
func (r *Reconciler) observeRollout(_ context.Context, s *scope) (bool, error) {
	d, err := r.deployment(s.agent)
	if err != nil {
		return true, err
	}
	s.status.Selector = Selector(s.agent)
	s.status.Endpoint = Endpoint(s.agent)
	s.status.Replicas, s.status.ReadyReplicas = 0, 0
	if d != nil {
		s.status.Replicas, s.status.ReadyReplicas = d.Status.Replicas, d.Status.ReadyReplicas
	}
	st := Rollout(d, s.wrote)
	msg := st.Message
	if s.unmet != "" {
		msg += "; required dependencies not ready: " + s.unmet
	}
	if st.State == conditions.Stalled {
		s.stall(st.Reason, msg)
		return false, nil
	}
	s.summarize(st.Phase, st.State, st.Reason, msg)
	return false, nil
}

// RolloutState is what a Deployment's rollout means for its Agent.
type RolloutState struct {
	Phase   ossav1.AgentPhase
	State   conditions.State
	Reason  string
	Message string
}

// Rollout decides the Agent's phase from its Deployment (nil while the
// cache has none); wrote says a child was just written, so the cached
// Deployment is not the one desired yet.
func Rollout(d *appsv1.Deployment, wrote bool) RolloutState {
	if d == nil {
		return RolloutState{ossav1.AgentProgressing, conditions.InProgress, ReasonProgressing, "waiting for the Deployment"}
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	ready := fmt.Sprintf("%d/%d replicas ready", d.Status.ReadyReplicas, want)
	switch {
	case !wrote && children.DeploymentReady(d):
		return RolloutState{ossav1.AgentReady, conditions.Current, ReasonReady, ready}
	case wrote || d.Status.ObservedGeneration < d.Generation:
		return RolloutState{ossav1.AgentProgressing, conditions.InProgress, ReasonProgressing, ready + "; rolling out"}
	}
	if msg := condition(d, appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonProgressDeadlineExceeded); msg != "" {
		return RolloutState{ossav1.AgentStalled, conditions.Stalled, ReasonProgressDeadlineExceeded,
			ready + "; rollout stalled: " + conditions.Truncate(msg, maxCauseMessage)}
	}
	if msg, ok := replicaFailure(d); ok {
		ref := refusal.OfMessage(msg)
		return RolloutState{ossav1.AgentProgressing, conditions.InProgress, ref.Reason,
			ready + "; pods cannot be created: " + conditions.Truncate(msg, maxCauseMessage)}
	}
	return RolloutState{ossav1.AgentProgressing, conditions.InProgress, ReasonProgressing, ready + "; rolling out"}
}

// condition returns the message of d's condition of type t when it has
// status and reason ("the <reason>" when it has no message), else "".
func condition(d *appsv1.Deployment, t appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason string) string {
	for _, c := range d.Status.Conditions {
		if c.Type == t && c.Status == status && c.Reason == reason {
			if c.Message == "" {
				return reason
			}
			return c.Message
		}
	}
	return ""
}

// replicaFailure is the ReplicaSet controller's message when it cannot
// create pods (ReplicaFailure=True).
func replicaFailure(d *appsv1.Deployment) (string, bool) {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
			return c.Message, true
		}
	}
	return "", false
}
