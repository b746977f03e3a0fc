package tasks

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func TestRanFor(t *testing.T) {
	tests := []struct {
		name       string
		start, end *metav1.Time
		want       string
	}{
		{name: "never started", end: at(time.Minute), want: ""},
		{name: "not ended", start: at(0), want: ""},
		{name: "seconds", start: at(2 * time.Second), end: at(31 * time.Second), want: "29s"},
		{name: "minutes", start: at(0), end: at(90 * time.Second), want: "1m30s"},
		{name: "an end stamped before the start is no time", start: at(time.Second), end: at(0), want: "0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ranFor(tt.start, tt.end))
		})
	}
}

// TestTaskDuration: the status written when a task ends says how long its
// agent ran; a task that ends before its agent starts has no duration, and
// one that has not ended has none yet.
func TestTaskDuration(t *testing.T) {
	runningStatus := v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskRunning, JobName: "summarise", PodName: "summarise-abcde", StartTime: at(2 * time.Second)}
	complete := job(cond(batchv1.JobComplete, "CompletionsReached"))
	complete.Status.CompletionTime = at(31 * time.Second)
	tests := []struct {
		name   string
		old    v1alpha1.AgentTaskStatus
		cancel bool
		obs    Observation
		want   string
	}{
		{name: "running", obs: Observation{Job: job(), Pod: pod(corev1.PodRunning, running()), Now: now}, want: ""},
		{name: "succeeded", old: runningStatus, obs: Observation{Job: complete, Pod: pod(corev1.PodSucceeded, exited(0, "Completed", "ok")), Now: now}, want: "29s"},
		{name: "timed out", old: runningStatus, obs: Observation{Job: job(cond(batchv1.JobFailed, batchv1.JobReasonDeadlineExceeded)), Now: now}, want: "58s"},
		{name: "cancelled before it started", cancel: true, obs: Observation{Now: now}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := fullTask()
			task.Spec.Cancel = tt.cancel
			task.Status = tt.old
			assert.Equal(t, tt.want, ComputeStatus(task, tt.obs).Duration)
		})
	}
}
