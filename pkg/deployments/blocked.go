package deployments

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/refusal"
)

// maxCauseMessage bounds each part of a status message taken from the
// cluster: a scheduler's message grows with the nodes it names, a
// termination message is the app's own text.
const maxCauseMessage = 512

// maxBlockedMessage bounds the summary of the blocked services; the
// services beyond it are counted, not described.
const maxBlockedMessage = 4096

// Ranks of causes, from the root of a blocked rollout to its consequences:
// a rollout past its deadline (it names the cause below it too), a
// Deployment that cannot create pods, claims that are not bound, pods no
// node takes, then containers that cannot start or keep crashing. A
// service reports its lowest-ranked cause, an app the lowest-ranked of its
// services.
const (
	rankDeadline = iota
	rankFailedCreate
	rankClaim
	rankUnschedulable
	rankInvalidImage
	rankImagePull
	rankContainerConfig
	rankContainerStart
	rankCrashLoop
)

// cause is what keeps a pod, a claim or a Deployment from progressing.
// It is comparable: the pod handler compares a pod's cause before and
// after an update.
type cause struct {
	rank    int
	Reason  string
	Message string
}

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
		return &blocked{Service: in.Service, cause: cause{rank: rankDeadline, Reason: ReasonProgressDeadlineExceeded, Message: msg}}
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
	c := podsCause(in.Pods)
	if c != nil && c.rank == rankUnschedulable && len(waiting) > 0 {
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
			return &cause{rank: rankFailedCreate, Reason: ref.Reason, Message: "pods cannot be created: " + conditions.Truncate(c.Message, maxCauseMessage)}
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
		return &cause{rank: rankClaim, Reason: ReasonClaimLost, Message: msg}, ""
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
	return &cause{rank: rankClaim, Reason: ReasonClaimPending, Message: notBound + why}, ""
}

// podsCause is the lowest-ranked cause of the pods, naming the first pod
// that has it and counting the others.
func podsCause(pods []*corev1.Pod) *cause {
	var best *cause
	alike := 0
	for _, p := range pods {
		c := podCause(p)
		switch {
		case c == nil:
		case best == nil || c.rank < best.rank:
			best, alike = c, 0
		case c.rank == best.rank:
			alike++
		}
	}
	if best != nil && alike > 0 {
		best.Message += fmt.Sprintf(" (and %d more %s)", alike, plural(alike, "pod", "pods"))
	}
	return best
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// podCause is what keeps a pod from running ready: the scheduler finding no
// node, else its lowest-ranked container cause. A pod being deleted or
// finished is no cause: the ReplicaSet replaces it.
func podCause(pod *corev1.Pod) *cause {
	if pod == nil || pod.DeletionTimestamp != nil ||
		pod.Status.Phase != corev1.PodPending && pod.Status.Phase != corev1.PodRunning && pod.Status.Phase != "" {
		return nil
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			msg := c.Message
			if msg == "" {
				msg = c.Reason
			}
			return &cause{rank: rankUnschedulable, Reason: ReasonUnschedulable,
				Message: fmt.Sprintf("pod %s cannot be scheduled: %s", pod.Name, conditions.Truncate(msg, maxCauseMessage))}
		}
	}
	var best *cause
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range statuses {
			if c := containerCause(pod.Name, &statuses[i]); c != nil && (best == nil || c.rank < best.rank) {
				best = c
			}
		}
	}
	return best
}

// pullReasons are the kubelet's waiting reasons of an image that cannot be
// pulled (it alternates ErrImagePull and ImagePullBackOff while it retries).
var pullReasons = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "ErrImageNeverPull": true,
	"RegistryUnavailable": true, "SignatureValidationFailed": true,
}

// startReasons are the kubelet's waiting reasons of a container the
// runtime cannot create or start.
var startReasons = map[string]bool{
	"CreateContainerError": true, "RunContainerError": true, "PreStartHookError": true, "PostStartHookError": true,
}

// containerCause is what keeps a container from running ready, as the
// kubelet reports it. Waiting for the image to be pulled, to be created
// (ContainerCreating) or a first exit are progress, not causes.
func containerCause(pod string, cs *corev1.ContainerStatus) *cause {
	if cs.Ready {
		return nil
	}
	if w := cs.State.Waiting; w != nil {
		switch {
		case w.Reason == "InvalidImageName":
			return &cause{rank: rankInvalidImage, Reason: ReasonInvalidImage,
				Message: fmt.Sprintf("pod %s: container %s has an invalid image name: %s", pod, cs.Name, conditions.Truncate(w.Message, maxCauseMessage))}
		case pullReasons[w.Reason]:
			return &cause{rank: rankImagePull, Reason: ReasonImagePullFailed,
				Message: fmt.Sprintf("pod %s cannot pull the image of container %s: %s", pod, cs.Name, conditions.Truncate(pullError(w.Message), maxCauseMessage))}
		case w.Reason == "CreateContainerConfigError":
			return &cause{rank: rankContainerConfig, Reason: ReasonContainerConfigError,
				Message: fmt.Sprintf("pod %s cannot configure container %s: %s", pod, cs.Name, conditions.Truncate(w.Message, maxCauseMessage))}
		case startReasons[w.Reason]:
			return &cause{rank: rankContainerStart, Reason: ReasonContainerStartFailed,
				Message: fmt.Sprintf("pod %s cannot start container %s (%s): %s", pod, cs.Name, w.Reason, conditions.Truncate(w.Message, maxCauseMessage))}
		case w.Reason == "CrashLoopBackOff":
			return crashCause(pod, cs.Name, cs.LastTerminationState.Terminated)
		}
		return nil
	}
	if cs.RestartCount == 0 {
		return nil
	}
	// Between two back-offs a crash-looping container runs (not ready) or
	// has just exited: still crash looping, so the status does not flip at
	// every restart.
	if t := cs.State.Terminated; t != nil {
		return crashCause(pod, cs.Name, t)
	}
	if cs.State.Running != nil && cs.LastTerminationState.Terminated != nil {
		return crashCause(pod, cs.Name, cs.LastTerminationState.Terminated)
	}
	return nil
}

// crashCause names a crash-looping container's last exit: its code, the
// kubelet's reason (Error, OOMKilled) and its termination message. The
// restart count and back-off are left out: they change at every restart,
// the cause does not.
func crashCause(pod, container string, last *corev1.ContainerStateTerminated) *cause {
	msg := fmt.Sprintf("pod %s: container %s is crash looping", pod, container)
	if last != nil {
		msg += fmt.Sprintf(", last exit code %d", last.ExitCode)
		if last.Reason != "" {
			msg += " (" + last.Reason + ")"
		}
		if m := strings.TrimSpace(last.Message); m != "" {
			msg += ": " + conditions.Truncate(m, maxCauseMessage)
		}
	}
	return &cause{rank: rankCrashLoop, Reason: ReasonCrashLooping, Message: msg}
}

// pullError is the pull error of a kubelet image message: its back-off
// message (`Back-off pulling image "x": ErrImagePull: <error>`) repeats the
// error of the failed pull, so both states read the same.
func pullError(msg string) string {
	const backOff, sep = "Back-off pulling image ", ": ErrImagePull: "
	if !strings.HasPrefix(msg, backOff) {
		return msg
	}
	if _, after, ok := strings.Cut(msg, sep); ok && after != "" {
		return after
	}
	return msg
}

// blockedSummary is the reason and message of a rollout its blocked
// services (at least one) hold up: the reason of the lowest-ranked, every
// service's cause in order until maxBlockedMessage, and whether one of
// them exceeded its progress deadline.
func blockedSummary(bs []blocked) (reason, msg string, stalled bool) {
	first := bs[0]
	var b strings.Builder
	for i, s := range bs {
		if s.rank < first.rank {
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
	return first.Reason, b.String(), first.rank == rankDeadline
}
