//go:build chaos

package chaos

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/pkg/labelkeys"
)

// outcome is what a burst came to.
type outcome struct {
	// Seconds from the first create until every task and workflow was terminal.
	Seconds        float64        `json:"secondsToAllTerminal"`
	TaskPhases     map[string]int `json:"taskPhases"`
	WorkflowPhases map[string]int `json:"workflowPhases"`
	// JobsPerTaskOver1 counts AgentTasks owning more than one Job.
	JobsPerTaskOver1 int `json:"tasksWithDuplicateJobs"`
	TasksWithoutJob  int `json:"tasksWithoutJob"`
	// StepTasksOver1 counts workflow steps with more than one AgentTask.
	StepTasksOver1 int        `json:"stepsWithDuplicateTasks"`
	StepTasks      int        `json:"stepTasks"`
	Webhooks       deliveries `json:"webhooks"`
}

// converge waits until every task and workflow of the burst is terminal and
// every webhook delivered, then checks for duplicates.
func (b *burst) converge(t *testing.T, timeout time.Duration) outcome {
	t.Helper()
	cs := schedulerClient(t)
	sel := metav1.ListOptions{LabelSelector: runLabel + "=" + b.run}
	var o outcome
	deadline := time.Now().Add(timeout)
	for {
		tasks, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).List(t.Context(), sel)
		require.NoError(t, err)
		wfs, err := cs.SchedulerV1alpha1().Workflows(taskNamespace).List(t.Context(), sel)
		require.NoError(t, err)
		o.TaskPhases, o.WorkflowPhases = map[string]int{}, map[string]int{}
		terminal := 0
		for _, at := range tasks.Items {
			o.TaskPhases[string(at.Status.Phase)]++
			if at.Status.Phase.IsTerminal() {
				terminal++
			}
		}
		for _, wf := range wfs.Items {
			o.WorkflowPhases[string(wf.Status.Phase)]++
			if wf.Status.Phase.IsTerminal() {
				terminal++
			}
		}
		if terminal == b.tasks+b.workflows && o.Seconds == 0 {
			o.Seconds = time.Since(b.created).Seconds()
		}
		o.Webhooks = b.rcv.count(b.webhookPaths())
		if o.Seconds > 0 && o.Webhooks.Delivered == o.Webhooks.Expected {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("burst %s after %s: %d of %d terminal (tasks %v, workflows %v), webhooks %+v",
				b.run, timeout, terminal, b.tasks+b.workflows, o.TaskPhases, o.WorkflowPhases, o.Webhooks)
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	b.countDuplicates(t, &o)
	return o
}

// countDuplicates counts Jobs per owning AgentTask and AgentTasks per
// workflow step of the burst.
func (b *burst) countDuplicates(t *testing.T, o *outcome) {
	t.Helper()
	cs := schedulerClient(t)
	tasks, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	jobs, err := cluster.Clientset.BatchV1().Jobs(taskNamespace).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	jobsOf := map[string]int{}
	for _, j := range jobs.Items {
		for _, ref := range j.OwnerReferences {
			if ref.Kind == "AgentTask" {
				jobsOf[string(ref.UID)]++
			}
		}
	}
	wfNames := map[string]bool{}
	for i := range b.workflows {
		wfNames[b.workflowName(i)] = true
	}
	perStep := map[string]int{}
	for _, at := range tasks.Items {
		wf := at.Labels[labelkeys.Workflow]
		if at.Labels[runLabel] != b.run && !wfNames[wf] {
			continue
		}
		switch n := jobsOf[string(at.UID)]; {
		case n > 1:
			o.JobsPerTaskOver1++
			t.Errorf("AgentTask %s owns %d Jobs", at.Name, n)
		case n == 0:
			o.TasksWithoutJob++
			t.Errorf("AgentTask %s owns no Job", at.Name)
		}
		if wfNames[wf] {
			o.StepTasks++
			perStep[fmt.Sprintf("%s/%s", wf, at.Labels[labelkeys.Step])]++
		}
	}
	for step, n := range perStep {
		if n > 1 {
			o.StepTasksOver1++
			t.Errorf("workflow step %s has %d AgentTasks", step, n)
		}
	}
	assert.Equal(t, b.workflows*b.steps, o.StepTasks, "one AgentTask per workflow step")
}
