//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// TestStepOutputReachesTheNextAgentVerbatim: an output holding "$(API_TOKEN)"
// and other dollar signs is passed to the next step's agent as written. The
// pod's env is expanded with the kubelet's own code (kubelet-env), and the
// fake agent of the second step echoes what it saw.
func TestStepOutputReachesTheNextAgentVerbatim(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	const text = "$(API_TOKEN) costs $5, $$ and $$(HOME)"
	name := fmt.Sprintf("e2e-%d-env", time.Now().Unix()%100000)
	wf := &v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Namespace: taskNamespace, Name: name},
		Spec: v1alpha1.WorkflowSpec{
			UserID: "e2e",
			Steps: []v1alpha1.WorkflowStep{
				{Name: "emit", Image: "agent:e2e", Input: map[string]string{
					"KWOK_TERMINATION_MESSAGE": `{"text":"` + text + `"}`,
				}},
				{Name: "read", Image: "agent:e2e", Input: map[string]string{
					"API_TOKEN":                "t0p-secret",
					"TEXT":                     "${steps.emit.output.text}",
					"KWOK_TERMINATION_MESSAGE": `{"seen":"${steps.emit.output.text}"}`,
				}},
			},
		},
	}
	_, err := cs.SchedulerV1alpha1().Workflows(taskNamespace).Create(t.Context(), wf, metav1.CreateOptions{})
	require.NoError(t, err)
	kubectlWait(t, c, taskNamespace, "workflow/"+name, "Ready")

	got, err := cs.SchedulerV1alpha1().Workflows(taskNamespace).Get(t.Context(), name, metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, v1alpha1.WorkflowSucceeded, got.Status.Phase, got.Status.Message)
	assert.Equal(t, map[string]string{"text": text}, got.Status.StepStatuses[0].Output, "the first agent's output as it wrote it")
	assert.Equal(t, map[string]string{"seen": text}, got.Status.StepStatuses[1].Output, "what the second agent saw")

	pods, err := c.Clientset.CoreV1().Pods(taskNamespace).List(t.Context(), metav1.ListOptions{
		LabelSelector: "batch.kubernetes.io/job-name=" + got.Status.StepStatuses[1].TaskName,
	})
	require.NoError(t, err)
	require.Len(t, pods.Items, 1)
	podJSON, err := json.Marshal(pods.Items[0])
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), c.Binary("kubelet-env"))
	cmd.Stdin = bytes.NewReader(podJSON)
	out, err := cmd.Output()
	require.NoError(t, err)
	var env map[string]map[string]string
	require.NoError(t, json.Unmarshal(out, &env))
	agent := env[pods.Items[0].Spec.Containers[0].Name]
	assert.Equal(t, text, agent["TEXT"], "the kubelet expands nothing in the value")
	assert.Equal(t, "t0p-secret", agent["API_TOKEN"])
}
