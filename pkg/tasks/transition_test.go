package tasks

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// TestPodCreationObservedOnce: the Job-to-pod time is observed by the
// status write that first records the task's pod, in the task's namespace,
// and never again: not for a later pod, not for a write that records none.
func TestPodCreationObservedOnce(t *testing.T) {
	const ns = "pod-creation"
	created := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t", CreationTimestamp: metav1.NewTime(created)}}
	pod := func(name string, after time.Duration) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(created.Add(after))}}
	}
	observed := func() (uint64, float64) {
		m := &dto.Metric{}
		require.NoError(t, PodCreationDuration.WithLabelValues(ns).(prometheus.Histogram).Write(m))
		return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
	}
	r := &Reconciler{}
	write := func(old, st v1alpha1.AgentTaskStatus, p *corev1.Pod) {
		task := &v1alpha1.AgentTask{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t"}, Status: st}
		r.recordTransition(t.Context(), &scope{obs: Observation{Job: job, Pod: p}}, old, task)
	}
	running := func(podName string) v1alpha1.AgentTaskStatus {
		return v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskRunning, PodName: podName}
	}
	count, sum := observed()

	write(v1alpha1.AgentTaskStatus{}, v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskPending}, pod("t-a", 2*time.Second))
	n, _ := observed()
	assert.Equal(t, count, n, "a pending pod is not recorded yet")

	write(v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskPending}, running("t-a"), pod("t-a", 2*time.Second))
	n, s := observed()
	assert.Equal(t, count+1, n, "the write that records the pod")
	assert.InDelta(t, 2.0, s-sum, 1e-9)

	write(running("t-a"), running("t-b"), pod("t-b", time.Minute))
	write(running("t-a"), running("t-a"), pod("t-a", 2*time.Second))
	n, _ = observed()
	assert.Equal(t, count+1, n, "a later pod, or the same one again, is not observed")
}
