package tasks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestFinishedPods(t *testing.T) {
	key := types.NamespacedName{Namespace: "agent-tasks", Name: "summarise"}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "summarise", UID: "job-1"}}
	other := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "summarise", UID: "job-2"}}
	mk := func(phase corev1.PodPhase) *corev1.Pod {
		p := pod(phase, running())
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}
		return p
	}

	f := newFinishedPods()
	f.put(key, mk(corev1.PodRunning))
	f.put(key, nil)
	assert.Zero(t, f.len(), "an unfinished pod may still change: not remembered")

	done := mk(corev1.PodSucceeded)
	f.put(key, done)
	got := f.get(key, job)
	if assert.NotNil(t, got) {
		assert.Equal(t, done.Status.Phase, got.Status.Phase)
		assert.Equal(t, corev1.PodSpec{}, got.Spec, "remembered trimmed")
	}
	assert.Nil(t, f.get(key, other), "a Job of the same name but another UID does not own it")
	assert.Nil(t, f.get(types.NamespacedName{Namespace: "agent-tasks", Name: "other"}, job))

	f.forget(key)
	assert.Nil(t, f.get(key, job))
	assert.Zero(t, f.len())
}

// TestLeftPods: the name of a pod that left the cache is kept per task
// until it is found gone (unleave) or the task is forgotten.
func TestLeftPods(t *testing.T) {
	key := types.NamespacedName{Namespace: "agent-tasks", Name: "summarise"}
	f := newFinishedPods()
	assert.Empty(t, f.leftPod(key))
	f.leave(key, "summarise-abcde")
	assert.Equal(t, "summarise-abcde", f.leftPod(key))
	f.leave(key, "summarise-fghij")
	assert.Equal(t, "summarise-fghij", f.leftPod(key), "the last pod that left")
	f.unleave(key)
	assert.Empty(t, f.leftPod(key))
	f.leave(key, "summarise-abcde")
	f.forget(key)
	assert.Empty(t, f.leftPod(key), "forgotten with the task")
}
