package integration

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/testenv"
)

// columnsNamespace holds the objects of TestPrinterColumns.
const columnsNamespace = "it-columns"

// TestPrinterColumns asks the API server for the table `kubectl get` prints
// and checks the default columns, and the cells they take from the status:
// the task's reason and duration, the workflow's progress, the reason of
// its Ready condition (not of another condition) and its start.
func TestPrinterColumns(t *testing.T) {
	env := testenv.Require(t)
	cs := newSchedulerClient(t, env.Config)
	ensureNamespace(t, env.Config, columnsNamespace)
	start := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))

	task := validAgentTask(columnsNamespace, uniqueName("cols"))
	task.Status = schedulerv1alpha1.AgentTaskStatus{Phase: schedulerv1alpha1.TaskFailed, Reason: "OOMKilled", ExitCode: ptr.To[int32](137),
		StartTime: &start, CompletionTime: new(metav1.NewTime(start.Add(29 * time.Second))), Duration: "29s",
		Message: "the agent exited with code 137 (OOMKilled)"}
	createTaskWithStatus(t, cs, task)
	cells := tableRow(t, cs, "agenttasks", task.Name,
		[]string{"Name", "Task", "User", "Phase", "Reason", "Exit", "Started", "Duration", "Age"})
	assert.Equal(t, "Failed", cells["Phase"])
	assert.Equal(t, "OOMKilled", cells["Reason"])
	assert.Equal(t, float64(137), cells["Exit"])
	assert.Equal(t, "29s", cells["Duration"])

	wf := validWorkflow(columnsNamespace, uniqueName("cols"))
	wf.Status = schedulerv1alpha1.WorkflowStatus{Phase: schedulerv1alpha1.WorkflowRunning, CurrentStep: 1, Progress: "1/3", StartTime: &start,
		StepStatuses: []schedulerv1alpha1.StepStatus{
			{Name: "fetch", Phase: schedulerv1alpha1.StepSucceeded, Attempts: 1},
			{Name: "analyze", Phase: schedulerv1alpha1.StepRunning, Attempts: 1},
			{Name: "report", Phase: schedulerv1alpha1.StepPending},
		},
		Conditions: []metav1.Condition{
			{Type: schedulerv1alpha1.ConditionReconciling, Status: metav1.ConditionTrue, Reason: "NotTheReadyReason", Message: "m", LastTransitionTime: start},
			{Type: schedulerv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: "Running", Message: "m", LastTransitionTime: start},
		}}
	createWorkflowWithStatus(t, cs, wf)
	cells = tableRow(t, cs, "workflows", wf.Name,
		[]string{"Name", "User", "Phase", "Progress", "Reason", "Started", "Duration", "Age"})
	assert.Equal(t, "1/3", cells["Progress"])
	assert.Equal(t, "Running", cells["Reason"])
	// The API server prints a date column as the time since: how long the
	// workflow has run, while it runs.
	since, err := time.ParseDuration(fmt.Sprint(cells["Started"]))
	require.NoError(t, err, "Started %v", cells["Started"])
	assert.GreaterOrEqual(t, since, time.Minute, "started a minute ago")
	assert.Nil(t, cells["Duration"], "the duration is written when the workflow ends")
}

// createTaskWithStatus creates task and writes its status.
func createTaskWithStatus(t *testing.T, cs versioned.Interface, task *schedulerv1alpha1.AgentTask) {
	t.Helper()
	c := cs.SchedulerV1alpha1().AgentTasks(task.Namespace)
	status := task.Status
	created, err := c.Create(t.Context(), task, metav1.CreateOptions{})
	require.NoError(t, err)
	cleanupTyped(t, c, created.Name)
	created.Status = status
	_, err = c.UpdateStatus(t.Context(), created, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// createWorkflowWithStatus creates wf and writes its status.
func createWorkflowWithStatus(t *testing.T, cs versioned.Interface, wf *schedulerv1alpha1.Workflow) {
	t.Helper()
	c := cs.SchedulerV1alpha1().Workflows(wf.Namespace)
	status := wf.Status
	created, err := c.Create(t.Context(), wf, metav1.CreateOptions{})
	require.NoError(t, err)
	cleanupTyped(t, c, created.Name)
	created.Status = status
	_, err = c.UpdateStatus(t.Context(), created, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// tableRow gets the object as the Table `kubectl get` asks for, checks
// that its default columns (priority 0) are wantColumns, and returns the
// row's cells by column name.
func tableRow(t *testing.T, cs versioned.Interface, resource, name string, wantColumns []string) map[string]any {
	t.Helper()
	raw, err := cs.SchedulerV1alpha1().RESTClient().Get().Namespace(columnsNamespace).Resource(resource).Name(name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(t.Context()).Raw()
	require.NoError(t, err)
	var table metav1.Table
	require.NoError(t, json.Unmarshal(raw, &table))
	require.Len(t, table.Rows, 1)
	var columns []string
	cells := map[string]any{}
	for i, c := range table.ColumnDefinitions {
		if c.Priority == 0 {
			columns = append(columns, c.Name)
		}
		cells[c.Name] = table.Rows[0].Cells[i]
	}
	assert.Equal(t, wantColumns, columns, "the default columns of %s", resource)
	return cells
}
