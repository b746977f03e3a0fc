//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// agentTask is a task whose fake agent (the kwok stages) reads its behaviour
// from the task's input, which becomes the pod's env.
func agentTask(name string, input map[string]string, mods ...func(*v1alpha1.AgentTask)) *v1alpha1.AgentTask {
	at := &v1alpha1.AgentTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: taskNamespace, Name: name},
		Spec:       v1alpha1.AgentTaskSpec{TaskID: name, UserID: "e2e", Image: "ghcr.io/opsnorth/agent:e2e", Input: input},
	}
	for _, mod := range mods {
		mod(at)
	}
	return at
}

// TestAgentTasks runs tasks through the real Job controller on the kwok node
// and checks the phase, output and exit code users see.
func TestAgentTasks(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	stamp := time.Now().Unix() % 100000
	tests := []struct {
		name       string
		input      map[string]string
		timeout    *int64
		wantPhase  v1alpha1.TaskPhase
		wantOutput map[string]string
		wantExit   *int32
		wantReason string
	}{
		{
			name:       "succeeds with json output",
			input:      map[string]string{"KWOK_TERMINATION_MESSAGE": `{"answer":"42","model":"kwok"}`},
			wantPhase:  v1alpha1.TaskSucceeded,
			wantOutput: map[string]string{"answer": "42", "model": "kwok"},
			wantExit:   new(int32(0)),
		},
		{
			name:       "plain text output",
			input:      map[string]string{"KWOK_TERMINATION_MESSAGE": "all good"},
			wantPhase:  v1alpha1.TaskSucceeded,
			wantOutput: map[string]string{"result": "all good"},
		},
		{
			name:      "non-zero exit fails",
			input:     map[string]string{"KWOK_EXIT_CODE": "3"},
			wantPhase: v1alpha1.TaskFailed,
			wantExit:  new(int32(3)),
		},
		{
			name:       "runs past its timeout",
			input:      map[string]string{"KWOK_DELAY": "60s"},
			timeout:    new(int64(2)),
			wantPhase:  v1alpha1.TaskTimeout,
			wantReason: "DeadlineExceeded",
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name := fmt.Sprintf("e2e-%d-task-%d", stamp, i)
			at := agentTask(name, tt.input, func(at *v1alpha1.AgentTask) { at.Spec.TimeoutSeconds = tt.timeout })
			_, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(t.Context(), at, metav1.CreateOptions{})
			require.NoError(t, err)
			var got *v1alpha1.AgentTask
			require.Eventually(t, func() bool {
				got, err = cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Get(t.Context(), name, metav1.GetOptions{})
				return err == nil && got.Status.Phase.IsTerminal()
			}, timeout, tick, "task %s never finished", name)
			assert.Equal(t, tt.wantPhase, got.Status.Phase, got.Status.Message)
			assert.Equal(t, tt.wantOutput, got.Status.Output)
			if tt.wantExit != nil {
				assert.Equal(t, tt.wantExit, got.Status.ExitCode)
			}
			if tt.wantReason != "" {
				assert.Equal(t, tt.wantReason, got.Status.Reason)
			}
			assert.Equal(t, name, got.Status.JobName)
			// No webhook: the status that ends the task settles it, and
			// kubectl can select on it.
			assert.True(t, got.Status.Settled, "a finished task without a webhook is settled")
			out, err := kubectl(t, c, "get", "agenttasks", "-n", taskNamespace, "-o", "name",
				"--field-selector", "status.settled=true,metadata.name="+name)
			require.NoError(t, err, "%s", out)
			assert.Equal(t, "agenttask.scheduler.opsnorth.io/"+name, strings.TrimSpace(out))
			if tt.wantPhase == v1alpha1.TaskSucceeded {
				kubectlWait(t, c, taskNamespace, "agenttask/"+name, "Ready")
			}
		})
	}
}

// TestWorkflowPassesOutputs runs a 3-step workflow end to end: each step's
// fake agent echoes a termination message built from earlier outputs, so the
// last step's input proves the values travelled through both hops.
func TestWorkflowPassesOutputs(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	name := fmt.Sprintf("e2e-%d-wf", time.Now().Unix()%100000)
	wf := &v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Namespace: taskNamespace, Name: name},
		Spec: v1alpha1.WorkflowSpec{
			UserID: "e2e",
			Input:  map[string]string{"topic": "kwok"},
			Steps: []v1alpha1.WorkflowStep{
				{Name: "research", Image: "agent:e2e", Input: map[string]string{
					"KWOK_TERMINATION_MESSAGE": `{"notes":"notes on ${inputs.topic}"}`,
				}},
				{Name: "summarize", Image: "agent:e2e", Input: map[string]string{
					"KWOK_TERMINATION_MESSAGE": `{"summary":"summary of ${steps.0.output.notes}"}`,
				}},
				{Name: "publish", Image: "agent:e2e", Input: map[string]string{
					"SUMMARY": "${steps.summarize.output.summary}",
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
	require.Len(t, got.Status.StepStatuses, 3)
	last := got.Status.StepStatuses[2]
	task, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Get(t.Context(), last.TaskName, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "summary of notes on kwok", task.Spec.Input["SUMMARY"])
	assert.Equal(t, map[string]string{"summary": "summary of notes on kwok"}, got.Status.StepStatuses[1].Output)
	assert.NotEmpty(t, got.Status.Duration)
}

// TestUserDeploymentLifecycle provisions an app from a raw image with the
// real Deployment controller (kwok makes its pods ready), then deletes it
// and checks nothing the manager created is left.
func TestUserDeploymentLifecycle(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	ns := newNamespace(t, c)
	name := fmt.Sprintf("e2e-%d-app", time.Now().Unix()%100000)
	ud := &v1alpha1.UserDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.UserDeploymentSpec{
			UserID: "e2e-" + name, Image: "ghcr.io/opsnorth/hello:1.0", ContainerPort: new(int32(8080)),
			ConfigData: v1alpha1.EnvMap{"GREETING": "hello"},
		},
	}
	_, err := cs.SchedulerV1alpha1().UserDeployments(ns).Create(t.Context(), ud, metav1.CreateOptions{})
	require.NoError(t, err)
	kubectlWait(t, c, ns, "userdeployment/"+name, "Ready")

	got, err := cs.SchedulerV1alpha1().UserDeployments(ns).Get(t.Context(), name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, v1alpha1.PhaseReady, got.Status.Phase)
	assert.GreaterOrEqual(t, got.Status.ReadyReplicas, int32(1))
	require.NotEmpty(t, got.Status.Ingresses)
	assert.Equal(t, "https://"+name+".apps.localtest.me", got.Status.Ingresses[0].URL)
	userNS := got.Status.Namespace
	require.NotEmpty(t, userNS)

	require.NoError(t, cs.SchedulerV1alpha1().UserDeployments(ns).Delete(t.Context(), name, metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		_, err := cs.SchedulerV1alpha1().UserDeployments(ns).Get(t.Context(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, timeout, tick, "UserDeployment %s stuck in deletion", name)
	selector := labelkeys.ManagedBy + "=" + labelkeys.ManagedByValue
	require.Eventually(t, func() bool {
		out, err := kubectl(t, c, "get", "all,configmaps,networkpolicies,ingressroutes,externalsecrets,resourcequotas,limitranges",
			"-n", userNS, "-l", selector, "-o", "name")
		return err == nil && out == ""
	}, timeout, tick, "objects managed by the suite remain in %s", userNS)
	require.Eventually(t, func() bool {
		_, err := c.Clientset.CoreV1().Namespaces().Get(t.Context(), userNS, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, timeout, tick, "user namespace %s not removed", userNS)
}
