package tasks

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func waiting(reason, msg string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
}

func unschedulable(msg string) *corev1.Pod {
	p := pod(corev1.PodPending, corev1.ContainerState{})
	p.Status.StartTime = nil
	p.Status.ContainerStatuses = nil
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: msg}}
	return p
}

const (
	saMissing   = `Error creating: pods "summarise-" is forbidden: error looking up service account agent-tasks/agent-sa: serviceaccount "agent-sa" not found`
	podSecurity = `Error creating: pods "summarise-abcde" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`
	quota       = `Error creating: pods "summarise-abcde" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1`
)

// TestNotStarted: status says why an agent does not start, within the
// reconcile that sees the cause; a cause that cannot heal fails the task at
// once, any other at the start deadline, with that cause as the reason.
func TestNotStarted(t *testing.T) {
	created := t0 // the task's creation
	beforeDeadline, afterDeadline := created.Add(5*time.Minute), created.Add(10*time.Minute+time.Second)
	tests := []struct {
		name                  string
		obs                   Observation
		phase                 v1alpha1.TaskPhase
		reason, message, cond string
	}{
		{name: "missing service account", obs: Observation{Job: job(), CreateFailure: saMissing, Now: beforeDeadline},
			phase: v1alpha1.TaskPending, reason: "ServiceAccountNotFound", message: "the Job cannot create the agent's pod: " + saMissing},
		{name: "quota", obs: Observation{Job: job(), CreateFailure: quota, Now: beforeDeadline},
			phase: v1alpha1.TaskPending, reason: "QuotaExceeded", message: "the Job cannot create the agent's pod: " + quota},
		{name: "pod security ends at once", obs: Observation{Job: job(), CreateFailure: podSecurity, Now: created.Add(time.Second)},
			phase: v1alpha1.TaskFailed, reason: "AdmissionDenied", message: "the agent cannot start: the Job cannot create the agent's pod: " + podSecurity},
		{name: "a pod outranks an earlier create failure", obs: Observation{Job: job(), CreateFailure: saMissing, Now: beforeDeadline,
			Pod: pod(corev1.PodPending, corev1.ContainerState{})},
			phase: v1alpha1.TaskPending, message: "Job summarise created; waiting for its pod to run"},
		{name: "unschedulable", obs: Observation{Job: job(), Now: beforeDeadline, Pod: unschedulable("0/1 nodes are available: 1 Insufficient cpu.")},
			phase: v1alpha1.TaskPending, reason: "Unschedulable", message: "pod summarise-abcde cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu."},
		{name: "image pull back-off", obs: Observation{Job: job(), Now: beforeDeadline,
			Pod: pod(corev1.PodPending, waiting("ImagePullBackOff", `Back-off pulling image "registry.invalid/agent:1"`))},
			phase: v1alpha1.TaskPending, reason: "ImagePullBackOff", message: `pod summarise-abcde: Back-off pulling image "registry.invalid/agent:1"`},
		{name: "err image pull", obs: Observation{Job: job(), Now: beforeDeadline,
			Pod: pod(corev1.PodPending, waiting("ErrImagePull", "no such host"))},
			phase: v1alpha1.TaskPending, reason: "ErrImagePull", message: "pod summarise-abcde: no such host"},
		{name: "missing config", obs: Observation{Job: job(), Now: beforeDeadline,
			Pod: pod(corev1.PodPending, waiting("CreateContainerConfigError", `secret "llm-key" not found`))},
			phase: v1alpha1.TaskPending, reason: "CreateContainerConfigError", message: `pod summarise-abcde: secret "llm-key" not found`},
		{name: "invalid image name ends at once", obs: Observation{Job: job(), Now: created.Add(time.Second),
			Pod: pod(corev1.PodPending, waiting("InvalidImageName", `couldn't parse image name "Bad/Image": invalid reference format`))},
			phase: v1alpha1.TaskFailed, reason: "InvalidImageName",
			message: `the agent cannot start: pod summarise-abcde: couldn't parse image name "Bad/Image": invalid reference format`},
		{name: "container creating is progress", obs: Observation{Job: job(), Now: beforeDeadline,
			Pod: pod(corev1.PodPending, waiting("ContainerCreating", ""))},
			phase: v1alpha1.TaskPending, message: "Job summarise created; waiting for its pod to run"},
		{name: "deadline with a cause fails with the cause", obs: Observation{Job: job(), Now: afterDeadline, Pod: unschedulable("0/1 nodes are available.")},
			phase: v1alpha1.TaskFailed, reason: "Unschedulable",
			message: "the agent did not start within 10m0s: pod summarise-abcde cannot be scheduled: 0/1 nodes are available."},
		{name: "deadline without a cause", obs: Observation{Job: job(), Now: afterDeadline},
			phase: v1alpha1.TaskFailed, reason: ReasonStartTimeout,
			message: "the agent did not start within 10m0s: Job summarise created; waiting for its pod to run"},
		{name: "deadline on a refused job", obs: Observation{Waiting: "the API server refused the task's Job (QuotaExceeded), retrying: x",
			WaitingReason: "QuotaExceeded", Now: afterDeadline},
			phase: v1alpha1.TaskFailed, reason: "QuotaExceeded",
			message: "the agent did not start within 10m0s: the API server refused the task's Job (QuotaExceeded), retrying: x"},
		{name: "a refused job waits with its reason", obs: Observation{Waiting: "refused", WaitingReason: "Throttled", Now: beforeDeadline},
			phase: v1alpha1.TaskPending, reason: "Throttled", message: "refused"},
		{name: "one second before the deadline", obs: Observation{Job: job(), Now: created.Add(10 * time.Minute)},
			phase: v1alpha1.TaskPending, message: "Job summarise created; waiting for its pod to run"},
		{name: "a running agent has no deadline", obs: Observation{Job: job(), Now: afterDeadline, Pod: pod(corev1.PodRunning, running())},
			phase: v1alpha1.TaskRunning, message: "the agent is running in pod summarise-abcde"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := fullTask()
			task.CreationTimestamp = metav1.Time{Time: created}
			tt.obs.StartTimeout = 10 * time.Minute
			st := ComputeStatus(task, tt.obs)
			assert.Equal(t, tt.phase, st.Phase)
			assert.Equal(t, tt.reason, st.Reason)
			assert.Equal(t, tt.message, st.Message)
			ready := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
			if assert.NotNil(t, ready) && tt.reason != "" {
				assert.Equal(t, tt.reason, ready.Reason, "the Ready condition names the cause")
			}
		})
	}
}

func TestStartTimeoutOfTheTask(t *testing.T) {
	task := fullTask()
	task.CreationTimestamp = metav1.Time{Time: t0}
	task.Spec.StartTimeoutSeconds = ptr.To[int64](30)
	obs := Observation{Job: job(), StartTimeout: time.Hour, Now: t0.Add(31 * time.Second)}
	st := ComputeStatus(task, obs)
	assert.Equal(t, v1alpha1.TaskFailed, st.Phase)
	assert.Equal(t, "the agent did not start within 30s: Job summarise created; waiting for its pod to run", st.Message)

	task.Spec.StartTimeoutSeconds = nil
	obs.StartTimeout = 0
	obs.Now = t0.Add(1000 * time.Hour)
	assert.Equal(t, v1alpha1.TaskPending, ComputeStatus(task, obs).Phase, "0 waits for ever")
}

func TestCauseMessagesAreBounded(t *testing.T) {
	long := strings.Repeat("ü", 2000)
	c := podCause(unschedulable(long))
	assert.LessOrEqual(t, len(c.Message), maxCauseMessage+len("pod summarise-abcde cannot be scheduled: ")+len("…"))
	assert.True(t, strings.HasSuffix(c.Message, "ü…"), "cut on a rune boundary")
}

func TestPodNews(t *testing.T) {
	pending := pod(corev1.PodPending, corev1.ContainerState{})
	pulling := pod(corev1.PodPending, waiting("ErrImagePull", "x"))
	backoff := pod(corev1.PodPending, waiting("ImagePullBackOff", "x"))
	for _, tt := range []struct {
		name     string
		old, new *corev1.Pod
		want     bool
	}{
		{"a new pending pod", nil, pending, false},
		{"scheduled, still pending", pending, pending.DeepCopy(), false},
		{"a cause appears", pending, pulling, true},
		{"the cause changes", pulling, backoff, true},
		{"the same cause", backoff, backoff.DeepCopy(), false},
		{"it runs", pending, pod(corev1.PodRunning, running()), true},
		{"a running pod's update", pod(corev1.PodRunning, running()), pod(corev1.PodRunning, running()), true},
	} {
		assert.Equal(t, tt.want, podNews(tt.old, tt.new), tt.name)
	}
}

func TestTruncatedOutput(t *testing.T) {
	task := fullTask()
	task.Status = v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskRunning}
	for _, tt := range []struct {
		size      int
		truncated bool
	}{{4095, false}, {4096, true}} {
		msg := strings.Repeat("x", tt.size)
		st := ComputeStatus(task, Observation{Job: job(cond("Complete", "CompletionsReached")),
			Pod: pod(corev1.PodSucceeded, exited(0, "Completed", msg)), Now: now})
		assert.Equal(t, v1alpha1.TaskSucceeded, st.Phase)
		assert.Equal(t, msg, st.Output[ResultKey], "the bytes kept are the output")
		c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionOutputTruncated)
		assert.Equal(t, tt.truncated, c != nil, "a %d-byte message", tt.size)
		if c != nil {
			assert.Equal(t, metav1.ConditionTrue, c.Status)
			assert.Equal(t, v1alpha1.ReasonOutputTruncated, c.Reason)
			assert.Equal(t, "output is the 4096 bytes the kubelet kept of the agent's termination message: it keeps only the last 4096; "+
				"return larger results by reference (a URL or object key in the output)", c.Message)
		}
	}
}
