package plugin

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testkit"
)

// The workflows in the states the tests show: statuses as the workflows
// manager writes them, at fixed times after t0.

func workflow(name string, steps ...v1alpha1.WorkflowStep) *v1alpha1.Workflow {
	wf := testkit.MakeWorkflow(name, "").Obj()
	wf.Spec.Steps = steps
	return wf
}

func agentStep(name string, dependsOn ...string) v1alpha1.WorkflowStep {
	return testkit.MakeStep(name).DependsOn(dependsOn...).Obj()
}

func approvalStep(name, message string, dependsOn ...string) v1alpha1.WorkflowStep {
	return v1alpha1.WorkflowStep{Name: name, Approval: &v1alpha1.ApprovalGate{Message: message}, DependsOn: dependsOn}
}

// taskName names a step attempt's AgentTask ending in "-<attempt>" as the
// workflows manager does (it adds a hash the plugin does not need).
func taskName(wf, step string, attempt int) string { return fmt.Sprintf("%s-%s-%d", wf, step, attempt) }

func condition(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: *at(30)}
}

// runningDAG is a DAG halfway: two roots done, one step retrying, one
// running, an approval step and the last step still to come.
func runningDAG() *v1alpha1.Workflow {
	wf := workflow("research",
		agentStep("fetch"), agentStep("search"),
		agentStep("summarize", "fetch", "search"), agentStep("lint", "fetch"),
		approvalStep("review", "Check the summary", "summarize"), agentStep("publish", "review", "lint"))
	wf.Status = v1alpha1.WorkflowStatus{
		Phase: v1alpha1.WorkflowRunning, StartTime: at(0), CurrentStep: 2,
		Conditions: []metav1.Condition{
			condition(v1alpha1.ConditionReady, metav1.ConditionFalse, "Running", "2 of 6 steps succeeded"),
			condition(v1alpha1.ConditionReconciling, metav1.ConditionTrue, "Running", "2 of 6 steps succeeded"),
		},
		StepStatuses: []v1alpha1.StepStatus{
			{Name: "fetch", Phase: v1alpha1.StepSucceeded, Attempts: 1, TaskName: taskName("research", "fetch", 0),
				StartTime: at(0), CompletionTime: at(40), Output: map[string]string{"sources": "…", "pages": "12"}},
			{Name: "search", Phase: v1alpha1.StepSucceeded, Attempts: 1, TaskName: taskName("research", "search", 0),
				StartTime: at(0), CompletionTime: at(75), Output: map[string]string{"results": "…"}},
			{Name: "summarize", Phase: v1alpha1.StepRunning, Attempts: 1, TaskName: taskName("research", "summarize", 0),
				StartTime: at(75)},
			{Name: "lint", Phase: v1alpha1.StepRetrying, Attempts: 2, TaskName: taskName("research", "lint", 1),
				StartTime: at(40), NextAttemptTime: at(310), Reason: "StepFailed", Message: "agent exited with code 1: 3 problems"},
			{Name: "review", Phase: v1alpha1.StepPending},
		},
	}
	return wf
}

// waitingApproval is a sequential workflow whose approval step waits.
func waitingApproval() *v1alpha1.Workflow {
	wf := workflow("draft-review", agentStep("draft"),
		approvalStep("review", "Is the draft at ${steps.draft.output.url} ready?"), agentStep("publish"))
	wf.Status = v1alpha1.WorkflowStatus{
		Phase: v1alpha1.WorkflowRunning, StartTime: at(0), CurrentStep: 1,
		StepStatuses: []v1alpha1.StepStatus{
			{Name: "draft", Phase: v1alpha1.StepSucceeded, Attempts: 1, TaskName: taskName("draft-review", "draft", 0),
				StartTime: at(0), CompletionTime: at(120), Output: map[string]string{"url": "https://drafts.example.com/42", "words": "1200"}},
			{Name: "review", Phase: v1alpha1.StepWaiting, StartTime: at(120),
				Message: "Is the draft at https://drafts.example.com/42 ready?"},
			{Name: "publish", Phase: v1alpha1.StepPending},
		},
	}
	return wf
}

// suspended is a sequential workflow suspended after two steps, for the
// second time in its run.
func suspended() *v1alpha1.Workflow {
	wf := workflow("nightly", agentStep("backup"), agentStep("verify"), agentStep("prune"))
	wf.Spec.Suspend = true
	wf.Status = v1alpha1.WorkflowStatus{
		Phase: v1alpha1.WorkflowSuspended, StartTime: at(0), CurrentStep: 2, SuspendTime: at(180), SuspendedSeconds: 90,
		StepStatuses: []v1alpha1.StepStatus{
			{Name: "backup", Phase: v1alpha1.StepSucceeded, Attempts: 1, TaskName: taskName("nightly", "backup", 0),
				StartTime: at(0), CompletionTime: at(60), Output: map[string]string{"snapshot": "s-1"}},
			{Name: "verify", Phase: v1alpha1.StepSucceeded, Attempts: 1, TaskName: taskName("nightly", "verify", 0),
				StartTime: at(60), CompletionTime: at(170)},
			{Name: "prune", Phase: v1alpha1.StepPending},
		},
	}
	return wf
}

// failedAfterRetry is a DAG chain that failed again after one retry.
func failedAfterRetry() *v1alpha1.Workflow {
	wf := workflow("etl", agentStep("extract"), agentStep("transform", "extract"), agentStep("load", "transform"))
	wf.Spec.Retry = 1
	msg := "step transform failed: agent exited with code 2"
	wf.Status = v1alpha1.WorkflowStatus{
		Phase: v1alpha1.WorkflowFailed, StartTime: at(0), CompletionTime: at(240), Duration: "4m0s", CurrentStep: 1,
		Message: msg, Retries: 1,
		RetryHistory: []v1alpha1.RetryRecord{{Time: *at(100), Reason: "StepFailed",
			Message: "step transform failed: agent exited with code 1", Steps: []string{"transform", "load"}}},
		// As the manager ends a failed workflow: Stalled and Failed beside Ready.
		Conditions: []metav1.Condition{condition(v1alpha1.ConditionReady, metav1.ConditionFalse, "StepFailed", msg),
			condition(v1alpha1.ConditionStalled, metav1.ConditionTrue, "StepFailed", msg),
			condition(v1alpha1.ConditionFailed, metav1.ConditionTrue, "StepFailed", msg)},
		StepStatuses: []v1alpha1.StepStatus{
			{Name: "extract", Phase: v1alpha1.StepSucceeded, Attempts: 1, TaskName: taskName("etl", "extract", 0),
				StartTime: at(0), CompletionTime: at(50), Output: map[string]string{"rows": "1000"}},
			{Name: "transform", Phase: v1alpha1.StepFailed, Attempts: 2, FirstAttempt: 1, TaskName: taskName("etl", "transform", 1),
				StartTime: at(100), CompletionTime: at(240), Reason: "StepFailed",
				Message: "agent exited with code 2: schema mismatch in column \"amount\": expected a decimal, found the text \"n/a\" in 17 rows\nsee the task's logs"},
			{Name: "load", Phase: v1alpha1.StepSkipped, Message: "transform failed"},
		},
	}
	return wf
}

// stepTaskOf is the AgentTask of a step attempt, labelled and owned as the
// workflows manager makes it.
func stepTaskOf(wf *v1alpha1.Workflow, step string, attempt int) *v1alpha1.AgentTask {
	task := testkit.MakeAgentTask(taskName(wf.Name, step, attempt), "").
		Label(labelkeys.Workflow, wf.Name).Label(labelkeys.Step, step).Obj()
	task.Spec.UserID = wf.Spec.UserID
	task.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(wf, v1alpha1.SchemeGroupVersion.WithKind("Workflow"))}
	return task
}
