// Package podcause decides, from a pod's status as the scheduler and the
// kubelet report it, what keeps the pod from running ready: no node takes
// it, an image that cannot be pulled or is invalid, a container whose
// configuration is missing or that cannot start, one that keeps crashing.
// The decisions are pure; the UserDeployment and Agent controllers of the
// deployments manager name them in their Ready conditions, from caches of
// trimmed pods (Trim) they watch for changed causes only (Changed).
package podcause

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"opsnorth.io/scheduler/pkg/conditions"
)

// MaxMessage bounds each part of a message taken from the cluster: a
// scheduler's message grows with the nodes it names, a termination message
// is the app's own text.
const MaxMessage = 512

// Reasons of the causes, for the Ready conditions that name them.
const (
	// ReasonUnschedulable: the scheduler finds no node for a pod.
	ReasonUnschedulable = "Unschedulable"
	// ReasonInvalidImage: the kubelet cannot parse an image name.
	ReasonInvalidImage = "InvalidImage"
	// ReasonImagePullFailed: an image cannot be pulled (ErrImagePull,
	// ImagePullBackOff).
	ReasonImagePullFailed = "ImagePullFailed"
	// ReasonContainerConfigError: a container's configuration is missing
	// (CreateContainerConfigError: a ConfigMap or Secret not found).
	ReasonContainerConfigError = "ContainerConfigError"
	// ReasonContainerStartFailed: the runtime cannot create or start a
	// container (CreateContainerError, RunContainerError).
	ReasonContainerStartFailed = "ContainerStartFailed"
	// ReasonCrashLooping: a container keeps exiting (CrashLoopBackOff).
	ReasonCrashLooping = "CrashLooping"
)

// Rank orders causes from the root of a pod's trouble to its consequences:
// the lower, the closer to the root. The negative ranks are free for the
// causes upstream of the pods (a Deployment that cannot create them, a
// claim that is not bound), which callers rank before these.
type Rank int

// The ranks of the pods' causes: pods no node takes, then containers that
// cannot start or keep crashing.
const (
	RankUnschedulable Rank = iota
	RankInvalidImage
	RankImagePull
	RankContainerConfig
	RankContainerStart
	RankCrashLoop
)

// Cause is what keeps a pod from running ready. It is comparable: a pod
// handler compares a pod's cause before and after an update (Changed).
type Cause struct {
	Rank    Rank
	Reason  string
	Message string
}

// Of is the lowest-ranked cause of the pods, naming the first pod that has
// it and counting the others; nil when none has one.
func Of(pods []*corev1.Pod) *Cause {
	var best *Cause
	alike := 0
	for _, p := range pods {
		c := OfPod(p)
		switch {
		case c == nil:
		case best == nil || c.Rank < best.Rank:
			best, alike = c, 0
		case c.Rank == best.Rank:
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

// OfPod is what keeps a pod from running ready: the scheduler finding no
// node, else its lowest-ranked container cause. A pod being deleted or
// finished is no cause: its ReplicaSet replaces it.
func OfPod(pod *corev1.Pod) *Cause {
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
			return &Cause{Rank: RankUnschedulable, Reason: ReasonUnschedulable,
				Message: fmt.Sprintf("pod %s cannot be scheduled: %s", pod.Name, conditions.Truncate(msg, MaxMessage))}
		}
	}
	var best *Cause
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range statuses {
			if c := containerCause(pod.Name, &statuses[i]); c != nil && (best == nil || c.Rank < best.Rank) {
				best = c
			}
		}
	}
	return best
}

// Changed reports whether a pod's cause differs between old and cur, nil
// for a pod not yet created or deleted: its creation, scheduling, start and
// readiness carry no news, nor do the restarts of a crash loop whose last
// exit stays the same.
func Changed(old, cur *corev1.Pod) bool {
	a, b := OfPod(old), OfPod(cur)
	return (a == nil) != (b == nil) || a != nil && *a != *b
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
func containerCause(pod string, cs *corev1.ContainerStatus) *Cause {
	if cs.Ready {
		return nil
	}
	if w := cs.State.Waiting; w != nil {
		switch {
		case w.Reason == "InvalidImageName":
			return &Cause{Rank: RankInvalidImage, Reason: ReasonInvalidImage,
				Message: fmt.Sprintf("pod %s: container %s has an invalid image name: %s", pod, cs.Name, conditions.Truncate(w.Message, MaxMessage))}
		case pullReasons[w.Reason]:
			return &Cause{Rank: RankImagePull, Reason: ReasonImagePullFailed,
				Message: fmt.Sprintf("pod %s cannot pull the image of container %s: %s", pod, cs.Name, conditions.Truncate(pullError(w.Message), MaxMessage))}
		case w.Reason == "CreateContainerConfigError":
			return &Cause{Rank: RankContainerConfig, Reason: ReasonContainerConfigError,
				Message: fmt.Sprintf("pod %s cannot configure container %s: %s", pod, cs.Name, conditions.Truncate(w.Message, MaxMessage))}
		case startReasons[w.Reason]:
			return &Cause{Rank: RankContainerStart, Reason: ReasonContainerStartFailed,
				Message: fmt.Sprintf("pod %s cannot start container %s (%s): %s", pod, cs.Name, w.Reason, conditions.Truncate(w.Message, MaxMessage))}
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
func crashCause(pod, container string, last *corev1.ContainerStateTerminated) *Cause {
	msg := fmt.Sprintf("pod %s: container %s is crash looping", pod, container)
	if last != nil {
		msg += fmt.Sprintf(", last exit code %d", last.ExitCode)
		if last.Reason != "" {
			msg += " (" + last.Reason + ")"
		}
		if m := strings.TrimSpace(last.Message); m != "" {
			msg += ": " + conditions.Truncate(m, MaxMessage)
		}
	}
	return &Cause{Rank: RankCrashLoop, Reason: ReasonCrashLooping, Message: msg}
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
