//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// TestWorkflowReadsSecretEnv: a workflow whose two steps read an API key
// from a Secret labelled for its user (through env, and through envFrom in
// the second step) runs to Succeeded on the real Job controller; each
// step's pod names the Secret key, and the key's value is in none of the
// stored Workflow, AgentTasks, Jobs and pods.
func TestWorkflowReadsSecretEnv(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	stamp := time.Now().Unix() % 100000
	name := fmt.Sprintf("e2e-%d-secret-env", stamp)
	b := make([]byte, 12)
	_, err := rand.Read(b)
	require.NoError(t, err)
	value := "sk-test-" + hex.EncodeToString(b)

	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: taskNamespace, Name: name, Labels: map[string]string{labelkeys.User: "e2e"}},
		Data:       map[string][]byte{"API_KEY": []byte(value), "ORG": []byte("acme")},
	}
	_, err = c.Clientset.CoreV1().Secrets(taskNamespace).Create(t.Context(), secret, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.Clientset.CoreV1().Secrets(taskNamespace).Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	apiKey := v1alpha1.SecretEnvVar{Name: "API_KEY", ValueFrom: v1alpha1.SecretEnvSource{
		SecretKeyRef: v1alpha1.SecretKeyReference{Name: name, Key: "API_KEY"}}}
	wf := &v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Namespace: taskNamespace, Name: name},
		Spec: v1alpha1.WorkflowSpec{
			UserID: "e2e",
			Steps: []v1alpha1.WorkflowStep{
				{Name: "draft", Image: "agent:e2e", Input: map[string]string{
					"KWOK_TERMINATION_MESSAGE": `{"draft":"d1"}`,
				}, AgentPod: v1alpha1.AgentPod{Env: []v1alpha1.SecretEnvVar{apiKey}}},
				{Name: "review", Image: "agent:e2e", Input: map[string]string{
					"DRAFT": "${steps.draft.output.draft}",
				}, AgentPod: v1alpha1.AgentPod{
					Env:     []v1alpha1.SecretEnvVar{apiKey},
					EnvFrom: []v1alpha1.SecretEnvFromSource{{Prefix: "LLM_", SecretRef: v1alpha1.SecretNameReference{Name: name}}},
				}},
			},
		},
	}
	_, err = cs.SchedulerV1alpha1().Workflows(taskNamespace).Create(t.Context(), wf, metav1.CreateOptions{})
	require.NoError(t, err)
	kubectlWait(t, c, taskNamespace, "workflow/"+name, "Ready")

	got, err := cs.SchedulerV1alpha1().Workflows(taskNamespace).Get(t.Context(), name, metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, v1alpha1.WorkflowSucceeded, got.Status.Phase, got.Status.Message)
	require.Len(t, got.Status.StepStatuses, 2)

	stored := map[string]any{"the Workflow": got}
	for i, step := range got.Status.StepStatuses {
		task, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Get(t.Context(), step.TaskName, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, wf.Spec.Steps[i].Env, task.Spec.Env, "step %s", step.Name)
		assert.Equal(t, wf.Spec.Steps[i].EnvFrom, task.Spec.EnvFrom, "step %s", step.Name)
		stored["the AgentTask of "+step.Name] = task
		job, err := c.Clientset.BatchV1().Jobs(taskNamespace).Get(t.Context(), step.TaskName, metav1.GetOptions{})
		require.NoError(t, err)
		stored["the Job of "+step.Name] = job
		pods, err := c.Clientset.CoreV1().Pods(taskNamespace).List(t.Context(), metav1.ListOptions{
			LabelSelector: "batch.kubernetes.io/job-name=" + step.TaskName,
		})
		require.NoError(t, err)
		require.Len(t, pods.Items, 1)
		stored["the pod of "+step.Name] = pods.Items[0]
		agent := pods.Items[0].Spec.Containers[0]
		assert.Contains(t, agent.Env, corev1.EnvVar{Name: "API_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "API_KEY", Optional: ptr.To(false)}}},
			"the kubelet reads the key for step %s", step.Name)
	}
	for what, obj := range stored {
		data, err := json.Marshal(obj)
		require.NoError(t, err)
		for _, form := range []string{value, base64.StdEncoding.EncodeToString([]byte(value))} {
			assert.NotContains(t, string(data), form, "the Secret's value in %s", what)
		}
	}
}
