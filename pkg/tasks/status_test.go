package tasks

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/webhook"
)

var (
	t0  = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now = t0.Add(time.Hour)
)

func at(d time.Duration) *metav1.Time { return &metav1.Time{Time: t0.Add(d)} }

func job(conds ...batchv1.JobCondition) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "summarise"}, Status: batchv1.JobStatus{Conditions: conds}}
}

func cond(t batchv1.JobConditionType, reason string) batchv1.JobCondition {
	return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: "job says " + reason, LastTransitionTime: *at(time.Minute)}
}

func pod(phase corev1.PodPhase, state corev1.ContainerState) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "summarise-abcde"},
		Status: corev1.PodStatus{Phase: phase, StartTime: at(0),
			ContainerStatuses: []corev1.ContainerStatus{{Name: ContainerName, State: state}}},
	}
}

func running() corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: *at(2 * time.Second)}}
}

func exited(code int32, reason, msg string) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, Reason: reason, Message: msg, StartedAt: *at(2 * time.Second), FinishedAt: *at(30 * time.Second)}}
}

func TestComputeStatus(t *testing.T) {
	runningStatus := v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskRunning, JobName: "summarise", PodName: "summarise-abcde",
		StartTime: at(2 * time.Second), Message: "the agent is running in pod summarise-abcde"}
	tests := []struct {
		name  string
		old   v1alpha1.AgentTaskStatus
		obs   Observation
		want  v1alpha1.AgentTaskStatus
		ready metav1.ConditionStatus
	}{
		{name: "job created, no pod", obs: Observation{Job: job()}, want: v1alpha1.AgentTaskStatus{
			Phase: v1alpha1.TaskPending, JobName: "summarise", Message: "Job summarise created; waiting for its pod to run"}},
		{name: "pod pending: not recorded until it runs", obs: Observation{Job: job(), Pod: pod(corev1.PodPending, corev1.ContainerState{})}, want: v1alpha1.AgentTaskStatus{
			Phase: v1alpha1.TaskPending, JobName: "summarise", Message: "Job summarise created; waiting for its pod to run"}},
		{name: "pod running", obs: Observation{Job: job(), Pod: pod(corev1.PodRunning, running())}, want: runningStatus},
		{name: "running never goes back to pending", old: runningStatus,
			obs: Observation{Job: job(), Pod: pod(corev1.PodPending, corev1.ContainerState{})}, want: runningStatus},
		{name: "complete with JSON output", old: runningStatus,
			obs: Observation{Job: func() *batchv1.Job {
				j := job(cond(batchv1.JobComplete, "CompletionsReached"))
				j.Status.CompletionTime = at(31 * time.Second)
				return j
			}(), Pod: pod(corev1.PodSucceeded, exited(0, "Completed", `{"k":"v"}`))},
			want: v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskSucceeded, JobName: "summarise", PodName: "summarise-abcde",
				StartTime: at(2 * time.Second), CompletionTime: at(31 * time.Second), Output: map[string]string{"k": "v"},
				Reason: ReasonCompleted, Message: "the agent completed successfully", ExitCode: ptr.To[int32](0)},
			ready: metav1.ConditionTrue},
		{name: "failed with exit code", old: runningStatus,
			obs: Observation{Job: job(cond(batchv1.JobFailed, "BackoffLimitExceeded")), Pod: pod(corev1.PodFailed, exited(137, "OOMKilled", ""))},
			want: v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskFailed, JobName: "summarise", PodName: "summarise-abcde",
				StartTime: at(2 * time.Second), CompletionTime: at(time.Minute), Reason: "OOMKilled",
				Message: "the agent exited with code 137 (OOMKilled)", ExitCode: ptr.To[int32](137)}},
		{name: "failed job without pod keeps the job's reason", old: runningStatus,
			obs: Observation{Job: job(cond(batchv1.JobFailed, "BackoffLimitExceeded"))},
			want: v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskFailed, JobName: "summarise", PodName: "summarise-abcde",
				StartTime: at(2 * time.Second), CompletionTime: at(time.Minute), Reason: "BackoffLimitExceeded", Message: "job says BackoffLimitExceeded"}},
		{name: "deadline exceeded is Timeout", old: runningStatus,
			obs: Observation{Job: job(cond(batchv1.JobFailed, "DeadlineExceeded")), PodGone: true},
			want: v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskTimeout, JobName: "summarise", PodName: "summarise-abcde",
				StartTime: at(2 * time.Second), CompletionTime: at(time.Minute), Reason: ReasonDeadlineExceeded,
				Message: "the task ran longer than its timeout of 60s"}},
		{name: "pod gone after FailureTarget is the Job's doing, not a deletion", old: runningStatus,
			obs: Observation{Job: job(cond(batchv1.JobFailureTarget, "DeadlineExceeded")), PodGone: true},
			want: v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskTimeout, JobName: "summarise", PodName: "summarise-abcde",
				StartTime: at(2 * time.Second), CompletionTime: at(time.Minute), Reason: ReasonDeadlineExceeded,
				Message: "the task ran longer than its timeout of 60s"}},
		{name: "pod deleted while running", old: runningStatus, obs: Observation{Job: job(), PodGone: true, Now: now},
			want: v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskFailed, JobName: "summarise", PodName: "summarise-abcde",
				StartTime: at(2 * time.Second), CompletionTime: &metav1.Time{Time: now}, Reason: ReasonPodDeleted,
				Message: "pod summarise-abcde was deleted before the agent finished"}},
		{name: "pod evicted", old: runningStatus, obs: Observation{Job: job(), Now: now, Pod: func() *corev1.Pod {
			p := pod(corev1.PodRunning, running())
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI", Message: "drained"}}
			return p
		}()}, want: v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskFailed, JobName: "summarise", PodName: "summarise-abcde",
			StartTime: at(2 * time.Second), CompletionTime: &metav1.Time{Time: now}, Reason: ReasonEvicted,
			Message: "pod summarise-abcde was evicted (EvictionByEvictionAPI): drained"}},
		{name: "preempted before it ran: the failed Job's pod says why", old: v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskPending, JobName: "summarise"},
			obs: Observation{Job: job(cond(batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded)), Now: now, Pod: func() *corev1.Pod {
				p := pod(corev1.PodPending, corev1.ContainerState{})
				p.Status.StartTime = nil
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler", Message: "preempted"}}
				return p
			}()}, want: v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskFailed, JobName: "summarise", PodName: "summarise-abcde",
				CompletionTime: at(time.Minute), Reason: ReasonEvicted,
				Message: "pod summarise-abcde was evicted (PreemptionByScheduler): preempted"}},
		{name: "job deleted", old: runningStatus, obs: Observation{JobGone: true, Now: now},
			want: v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskFailed, JobName: "summarise", PodName: "summarise-abcde",
				StartTime: at(2 * time.Second), CompletionTime: &metav1.Time{Time: now}, Reason: ReasonJobDeleted,
				Message: "Job summarise was deleted before the task finished"}},
		{name: "foreign job", obs: Observation{FailReason: ReasonJobConflict, FailMessage: "not ours", Now: now},
			want: v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskFailed, CompletionTime: &metav1.Time{Time: now},
				Reason: ReasonJobConflict, Message: "not ours"}},
		{name: "terminal never changes", old: v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskFailed, Reason: ReasonPodDeleted, Message: "gone", CompletionTime: at(0)},
			obs:  Observation{Job: job(cond(batchv1.JobComplete, "CompletionsReached")), Pod: pod(corev1.PodSucceeded, exited(0, "Completed", "x"))},
			want: v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskFailed, Reason: ReasonPodDeleted, Message: "gone", CompletionTime: at(0)}},
		{name: "invalid container reason falls back to Error", old: runningStatus,
			obs: Observation{Job: job(cond(batchv1.JobFailed, "BackoffLimitExceeded")), Pod: pod(corev1.PodFailed, exited(2, "bad reason!", ""))},
			want: v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskFailed, JobName: "summarise", PodName: "summarise-abcde",
				StartTime: at(2 * time.Second), CompletionTime: at(time.Minute), Reason: ReasonError,
				Message: "the agent exited with code 2 (Error)", ExitCode: ptr.To[int32](2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := fullTask()
			task.Spec.TimeoutSeconds = ptr.To[int64](60)
			task.Status = tt.old
			got := ComputeStatus(task, tt.obs)
			assert.Equal(t, int64(1), got.ObservedGeneration)
			ready := meta.FindStatusCondition(got.Conditions, v1alpha1.ConditionReady)
			if assert.NotNil(t, ready) {
				want := tt.ready
				if want == "" {
					want = metav1.ConditionFalse
				}
				assert.Equal(t, want, ready.Status)
			}
			assert.Equal(t, !got.Phase.IsTerminal(), meta.IsStatusConditionTrue(got.Conditions, v1alpha1.ConditionReconciling))
			failed := got.Phase.IsTerminal() && got.Phase != v1alpha1.TaskSucceeded
			assert.Equal(t, failed, meta.IsStatusConditionTrue(got.Conditions, v1alpha1.ConditionStalled), "Stalled")
			assert.Equal(t, failed, meta.IsStatusConditionTrue(got.Conditions, v1alpha1.ConditionFailed), "Failed")
			assert.Equal(t, got.Phase == v1alpha1.TaskSucceeded, meta.IsStatusConditionTrue(got.Conditions, v1alpha1.ConditionComplete), "Complete")
			if failed {
				assert.Equal(t, got.Reason, meta.FindStatusCondition(got.Conditions, v1alpha1.ConditionFailed).Reason, "Failed carries the reason")
			}
			assert.Equal(t, got.Phase.IsTerminal(), got.Settled, "a task without a webhook is settled once it ends")
			assert.Equal(t, ranFor(got.StartTime, got.CompletionTime), got.Duration, "the duration is the times' (cases in TestTaskDuration)")
			got.Conditions, got.ObservedGeneration, got.Settled, got.Duration = nil, 0, false, ""
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestComputeStatusIsStable(t *testing.T) {
	task := fullTask()
	obs := Observation{Job: job(), Pod: pod(corev1.PodRunning, running()), Now: now}
	task.Status = ComputeStatus(task, obs)
	obs.Now = now.Add(time.Hour)
	assert.Equal(t, task.Status, ComputeStatus(task, obs), "a converged task computes the same status")
}

func TestWebhookCondition(t *testing.T) {
	task := fullTask()
	task.Spec.WebhookURL = "https://example.com/hook"
	for _, tt := range []struct {
		delivery *v1alpha1.WebhookDelivery
		status   metav1.ConditionStatus
		reason   string
	}{
		{nil, metav1.ConditionFalse, "Pending"},
		{&v1alpha1.WebhookDelivery{Attempts: 2, LastError: "503"}, metav1.ConditionFalse, "Retrying"},
		{&v1alpha1.WebhookDelivery{Attempts: 8, GaveUp: true}, metav1.ConditionFalse, "GaveUp"},
		{&v1alpha1.WebhookDelivery{Attempts: 1, Delivered: true, LastStatusCode: 204}, metav1.ConditionTrue, "Delivered"},
	} {
		task.Status = v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskSucceeded, Webhook: tt.delivery}
		st := ComputeStatus(task, Observation{})
		c := meta.FindStatusCondition(st.Conditions, webhook.ConditionDelivered)
		if assert.NotNil(t, c, tt.reason) {
			assert.Equal(t, tt.status, c.Status, tt.reason)
			assert.Equal(t, tt.reason, c.Reason)
		}
	}
	task.Status = v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskRunning}
	assert.Nil(t, meta.FindStatusCondition(ComputeStatus(task, Observation{Job: job()}).Conditions, webhook.ConditionDelivered),
		"no webhook condition before the task is terminal")
}

// TestComputeSettled: a task is settled once the manager has nothing left to do:
// terminal, and its webhook (if any) delivered or given up.
func TestComputeSettled(t *testing.T) {
	for _, tt := range []struct {
		name     string
		phase    v1alpha1.TaskPhase
		url      string
		delivery *v1alpha1.WebhookDelivery
		want     bool
	}{
		{name: "running", phase: v1alpha1.TaskRunning},
		{name: "running with a webhook", phase: v1alpha1.TaskRunning, url: "https://example.com/hook"},
		{name: "succeeded", phase: v1alpha1.TaskSucceeded, want: true},
		{name: "timed out", phase: v1alpha1.TaskTimeout, want: true},
		{name: "webhook not sent yet", phase: v1alpha1.TaskSucceeded, url: "https://example.com/hook"},
		{name: "webhook retrying", phase: v1alpha1.TaskFailed, url: "https://example.com/hook",
			delivery: &v1alpha1.WebhookDelivery{Attempts: 2, LastError: "503"}},
		{name: "webhook delivered", phase: v1alpha1.TaskFailed, url: "https://example.com/hook",
			delivery: &v1alpha1.WebhookDelivery{Attempts: 1, Delivered: true}, want: true},
		{name: "webhook given up", phase: v1alpha1.TaskSucceeded, url: "https://example.com/hook",
			delivery: &v1alpha1.WebhookDelivery{Attempts: 8, GaveUp: true}, want: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			task := fullTask()
			task.Spec.WebhookURL = tt.url
			task.Status = v1alpha1.AgentTaskStatus{Phase: tt.phase, Webhook: tt.delivery, Settled: !tt.want}
			assert.Equal(t, tt.want, ComputeStatus(task, Observation{Job: job(), Pod: pod(corev1.PodRunning, running())}).Settled)
		})
	}
}
