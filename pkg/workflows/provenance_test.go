package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func TestStepSignature(t *testing.T) {
	since := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	signer := &stepSigner{key: []byte("0123456789abcdef0123456789abcdef"), since: since}
	wf := makeWorkflow("build").step("compile", nil).obj()
	wf.UID = "wf-uid"
	signed := func() *v1alpha1.AgentTask {
		task := buildTask(wf, 0, 0, map[string]string{"X": "v"})
		task.CreationTimestamp = metav1.NewTime(since.Add(time.Hour))
		signer.sign(wf, task)
		return task
	}
	other := makeWorkflow("build").step("compile", nil).obj()
	other.UID = "other-uid"
	for _, tc := range []struct {
		name   string
		mutate func(*v1alpha1.AgentTask)
		wf     *v1alpha1.Workflow
		want   bool
	}{
		{"signed by the manager", func(*v1alpha1.AgentTask) {}, wf, true},
		{"the spec changed after signing", func(t *v1alpha1.AgentTask) { t.Spec.Image = "mallory:1" }, wf, false},
		{"a webhook added", func(t *v1alpha1.AgentTask) { t.Spec.WebhookURL = "https://mallory.example" }, wf, false},
		{"another key's signature", func(t *v1alpha1.AgentTask) {
			(&stepSigner{key: []byte("fedcba9876543210fedcba9876543210")}).sign(wf, t)
		}, wf, false},
		{"unsigned, created after signing began", func(t *v1alpha1.AgentTask) { delete(t.Annotations, AnnotationStepSignature) }, wf, false},
		{"unsigned, created before signing began", func(t *v1alpha1.AgentTask) {
			delete(t.Annotations, AnnotationStepSignature)
			t.CreationTimestamp = metav1.NewTime(since.Add(-time.Hour))
		}, wf, true},
		{"signed for another workflow of the same name", func(*v1alpha1.AgentTask) {}, other, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := signed()
			tc.mutate(task)
			assert.Equal(t, tc.want, signer.isStep(task, tc.wf))
		})
	}
}
