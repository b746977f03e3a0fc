package deployments

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/deployments/podcause"
	"opsnorth.io/scheduler/pkg/refusal"
)

// maxCauseMessage bounds each part of a status message taken from the
// cluster (podcause.MaxMessage).
const maxCauseMessage = podcause.MaxMessage

// maxBlockedMessage bounds the summary of the blocked services; the
// services beyond it are counted, not described.
const maxBlockedMessage = 4096

// Ranks of causes, from the root of a blocked rollout to its consequences:
// a rollout past its deadline (it names the cause below it too), a
// Deployment that cannot create pods, claims that are not bound, then the
// pods' causes (podcause: pods no node takes, containers that cannot start
// or keep crashing). A service reports its lowest-ranked cause, an app the
// lowest-ranked of its services.
const (
	rankDeadline podcause.Rank = iota - 3
	rankFailedCreate
	rankClaim
)

// cause is what keeps a pod, a claim or a Deployment from progressing,
// ranked with the pods' causes.
type cause = podcause.Cause

// serviceRollout is what observeRollout knows of one service whose
// Deployment is not ready.
type serviceRollout struct {
	Service    string
	Deployment *appsv1.Deployment
	// Pods are the service's cached pods (trimPod).
	Pods []*corev1.Pod
	// Claims are the claims its pod template mounts.
	Claims []claimState
}

// claimState is one claim a service mounts.
type claimState struct {
	Name string
	// Claim is nil while it is not in the cache.
	Claim *corev1.PersistentVolumeClaim
	// Event is the claim's most telling event (claimEvent), nil for none.
	Event *corev1.Event
}

// blocked is what keeps one service's rollout from finishing.
type blocked struct {
	Service string
	cause
}

// serviceBlocked returns what keeps the service's rollout from finishing,
// nil when nothing the cluster reported does (the rollout is under way).
// A rollout past its progress deadline is stalled, with the cause found
// below it.
func serviceBlocked(in serviceRollout) *blocked {
	c := rolloutCause(in)
	if msg := deadlineExceeded(in.Deployment); msg != "" {
		msg = "rollout stalled: " + conditions.Truncate(msg, maxCauseMessage)
		if c != nil {
			msg += "; " + c.Message
		}
		return &blocked{Service: in.Service, cause: cause{Rank: rankDeadline, Reason: ReasonProgressDeadlineExceeded, Message: msg}}
	}
	if c == nil {
		return nil
	}
	return &blocked{Service: in.Service, cause: *c}
}

// rolloutCause is the lowest-ranked cause among the Deployment's, the
// claims' and the pods'.
func rolloutCause(in serviceRollout) *cause {
	if c := createCause(in.Deployment); c != nil {
		return c
	}
	var waiting []string
	for _, cl := range in.Claims {
		c, delayed := claimCause(cl)
		if c != nil {
			return c
		}
		if delayed != "" {
			waiting = append(waiting, delayed)
		}
	}
	c := podcause.Of(in.Pods)
	if c != nil && c.Rank == podcause.RankUnschedulable && len(waiting) > 0 {
		// The claims wait for the scheduler to place their pod.
		c.Message += "; " + strings.Join(waiting, "; ")
	}
	return c
}

// observed reports whether the Deployment's status is about its current
// spec: the conditions of an earlier one (before a fix) are no news.
func observed(d *appsv1.Deployment) bool {
	return d != nil && d.Status.ObservedGeneration >= d.Generation
}

// deadlineExceeded returns the Progressing condition's message when the
// Deployment controller gave up on the rollout, else "".
func deadlineExceeded(d *appsv1.Deployment) string {
	if !observed(d) {
		return ""
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == ReasonProgressDeadlineExceeded {
			if c.Message == "" {
				return "the progress deadline passed"
			}
			return c.Message
		}
	}
	return ""
}

// createCause is what the ReplicaSet controller met creating pods, as the
// Deployment's ReplicaFailure condition carries it: exceeded quota, a Pod
// Security or other admission denial, a missing ServiceAccount.
func createCause(d *appsv1.Deployment) *cause {
	if !observed(d) {
		return nil
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
			ref := refusal.OfMessage(c.Message)
			return &cause{Rank: rankFailedCreate, Reason: ref.Reason, Message: "pods cannot be created: " + conditions.Truncate(c.Message, maxCauseMessage)}
		}
	}
	return nil
}

// delayedBinding are the claim events that say binding waits for the
// scheduler to place a pod that uses the claim (WaitForFirstConsumer).
var delayedBinding = map[string]bool{"WaitForFirstConsumer": true, "WaitForPodScheduled": true}

// claimCause is why a claim is not bound. A claim whose binding waits for
// its pod to be scheduled is no cause itself: delayed then says so, for
// the message of the unschedulable pod.
func claimCause(cl claimState) (c *cause, delayed string) {
	pvc := cl.Claim
	if pvc == nil {
		return nil, ""
	}
	switch pvc.Status.Phase {
	case corev1.ClaimBound:
		return nil, ""
	case corev1.ClaimLost:
		msg := fmt.Sprintf("claim %s lost its volume", cl.Name)
		if pvc.Spec.VolumeName != "" {
			msg += " " + pvc.Spec.VolumeName
		}
		return &cause{Rank: rankClaim, Reason: ReasonClaimLost, Message: msg}, ""
	}
	notBound := fmt.Sprintf("claim %s is not bound: ", cl.Name)
	ev := cl.Event
	if ev != nil && delayedBinding[ev.Reason] {
		return nil, notBound + conditions.Truncate(ev.Message, maxCauseMessage)
	}
	var why string
	switch class := pvc.Spec.StorageClassName; {
	case ev != nil:
		why = conditions.Truncate(ev.Message, maxCauseMessage)
	case class == nil || *class == "":
		why = "it names no storage class and the cluster has no default StorageClass"
	default:
		why = fmt.Sprintf("waiting for a volume of StorageClass %q", *class)
	}
	return &cause{Rank: rankClaim, Reason: ReasonClaimPending, Message: notBound + why}, ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// blockedSummary is the reason and message of a rollout its blocked
// services (at least one) hold up: the reason of the lowest-ranked, every
// service's cause in order until maxBlockedMessage, and whether one of
// them exceeded its progress deadline.
func blockedSummary(bs []blocked) (reason, msg string, stalled bool) {
	first := bs[0]
	var b strings.Builder
	for i, s := range bs {
		if s.Rank < first.Rank {
			first = s
		}
		part := "service " + s.Service + ": " + s.Message
		if i > 0 {
			part = "; " + part
		}
		if i > 0 && b.Len()+len(part) > maxBlockedMessage {
			fmt.Fprintf(&b, "; %d more %s blocked", len(bs)-i, plural(len(bs)-i, "service", "services"))
			break
		}
		b.WriteString(part)
	}
	return first.Reason, b.String(), first.Rank == rankDeadline
}
