package agents

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/deployments/children"
	"opsnorth.io/scheduler/pkg/deployments/podcause"
	"opsnorth.io/scheduler/pkg/refusal"
)

// maxCauseMessage bounds a message taken from the Deployment's conditions.
const maxCauseMessage = podcause.MaxMessage

// observeRollout reports the Deployment: its replicas, and phase Ready once
// it rolled out; until then, what keeps its pods from running ready. Right
// after a write the caches show the Deployment and pods before it: their
// watch events bring the next reconcile.
func (r *Reconciler) observeRollout(_ context.Context, s *scope) (bool, error) {
	d, err := r.deployment(s.agent)
	if err != nil {
		return true, err
	}
	s.status.Selector = Selector(s.agent)
	s.status.Endpoint = Endpoint(s.agent)
	s.status.Replicas, s.status.ReadyReplicas = 0, 0
	var pods []*corev1.Pod
	if d != nil {
		s.status.Replicas, s.status.ReadyReplicas = d.Status.Replicas, d.Status.ReadyReplicas
		if !s.wrote && !children.DeploymentReady(d) {
			if pods, err = r.podsOf(s.agent); err != nil {
				return true, fmt.Errorf("list the pods of Agent %s/%s: %w", s.agent.Namespace, s.agent.Name, err)
			}
		}
	}
	st := Rollout(d, pods, s.wrote)
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
// cache has none) and the Deployment's pods (trimmed, sorted by name);
// wrote says a child was just written, so the cached Deployment is not the
// one desired yet. As for a UserDeployment's service, the root cause wins:
// a ReplicaSet that cannot create pods (the reason refusal.OfMessage
// names), then the pods' cause (podcause.Of: Unschedulable,
// ImagePullFailed, CrashLooping, ...), both in phase Progressing; a
// rollout past its progress deadline is Stalled and names that cause too.
func Rollout(d *appsv1.Deployment, pods []*corev1.Pod, wrote bool) RolloutState {
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
	case wrote:
		return RolloutState{ossav1.AgentProgressing, conditions.InProgress, ReasonProgressing, ready + "; rolling out"}
	}
	// The conditions of an earlier spec are no news; the pods' causes are.
	observed := d.Status.ObservedGeneration >= d.Generation
	var reason, cause string
	if msg, ok := replicaFailure(d); ok && observed {
		reason, cause = refusal.OfMessage(msg).Reason, "pods cannot be created: "+conditions.Truncate(msg, maxCauseMessage)
	} else if c := podcause.Of(pods); c != nil {
		reason, cause = c.Reason, c.Message
	}
	if msg := condition(d, appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonProgressDeadlineExceeded); msg != "" && observed {
		msg = ready + "; rollout stalled: " + conditions.Truncate(msg, maxCauseMessage)
		if cause != "" {
			msg += "; " + cause
		}
		return RolloutState{ossav1.AgentStalled, conditions.Stalled, ReasonProgressDeadlineExceeded, msg}
	}
	if cause != "" {
		return RolloutState{ossav1.AgentProgressing, conditions.InProgress, reason, ready + "; " + cause}
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
