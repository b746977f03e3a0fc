package plugin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testkit"
)

// getCase is one command whose output a golden file holds.
type getCase struct {
	golden  string
	args    []string
	wantErr string
}

func runGolden(t *testing.T, k *cluster, tests []getCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			r := k.in(t).run(tt.args...)
			if tt.wantErr == "" {
				assert.NoError(t, r.err)
			} else {
				assert.ErrorContains(t, r.err, tt.wantErr)
			}
			golden(t, tt.golden, r.text())
		})
	}
}

// TestGetWorkflow shows workflows in each state: a running DAG as a tree
// (plain and on a terminal), a sequential one waiting for approval, a
// suspended one, one failed after a retry, and one as YAML with its tasks.
func TestGetWorkflow(t *testing.T) {
	k := newCluster(t, "get-workflow")
	k.createWorkflow(runningDAG())
	k.createWorkflow(waitingApproval())
	k.createWorkflow(suspended())
	etl := k.createWorkflow(failedAfterRetry())
	for _, attempt := range []int{0, 1} {
		task := stepTaskOf(etl, "transform", attempt)
		task.Status = v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskFailed, Reason: "Error", ExitCode: new(int32(attempt + 1))}
		k.createTask(task)
	}
	runGolden(t, k, []getCase{
		{golden: "get-workflow-dag", args: []string{"get", "workflow", "research"}},
		{golden: "get-workflow-dag-terminal", args: []string{"get", "wf", "research", "--color=always"}},
		{golden: "get-workflow-waiting-approval", args: []string{"get", "wf/draft-review"}},
		{golden: "get-workflow-suspended", args: []string{"get", "workflows", "nightly"}},
		{golden: "get-workflow-suspended-terminal", args: []string{"get", "wf", "nightly", "--color=always"}},
		{golden: "get-workflow-failed-retried", args: []string{"get", "onwf", "etl"}},
		{golden: "get-workflow-yaml", args: []string{"get", "wf", "etl", "-o", "yaml"}},
		{golden: "get-workflow-not-found", args: []string{"get", "wf", "nope"}, wantErr: `workflow "nope" not found`},
		{golden: "get-unknown-kind", args: []string{"get", "pod", "x"}, wantErr: `unknown kind "pod"`},
		{golden: "get-bad-output", args: []string{"get", "wf", "etl", "-o", "wide"}, wantErr: "-o must be json or yaml"},
	})
}

// TestGetAgentTask shows a task stuck pending (its reason first), a
// finished step task with output keys and webhook, and one as JSON.
func TestGetAgentTask(t *testing.T) {
	k := newCluster(t, "get-task")
	stuckTask := testkit.MakeAgentTask("stuck", "").Image("ghcr.io/acme/agnet:1.2").Obj()
	stuckTask.Status = v1alpha1.AgentTaskStatus{
		Phase: v1alpha1.TaskPending, JobName: "stuck", PodName: "stuck-x7k2p",
		Reason: "ImagePullBackOff", Message: `Back-off pulling image "ghcr.io/acme/agnet:1.2": not found`,
		Conditions: []metav1.Condition{
			condition(v1alpha1.ConditionReady, metav1.ConditionFalse, "ImagePullBackOff", "waiting for the agent to start"),
			condition(v1alpha1.ConditionReconciling, metav1.ConditionTrue, "ImagePullBackOff", "waiting for the agent to start"),
		},
	}
	k.createTask(stuckTask)
	done := testkit.MakeAgentTask("research-fetch-0", "").
		Label(labelkeys.Workflow, "research").Label(labelkeys.Step, "fetch").Webhook("https://hooks.example.com/done").Obj()
	done.Status = v1alpha1.AgentTaskStatus{
		Phase: v1alpha1.TaskSucceeded, Reason: "Completed", Message: "agent exited with code 0", ExitCode: new(int32(0)),
		JobName: "research-fetch-0", PodName: "research-fetch-0-abcde", StartTime: at(10), CompletionTime: at(70),
		Output:  map[string]string{"summary": "secret-ish value", "result": "42"},
		Webhook: &v1alpha1.WebhookDelivery{Delivered: true, Attempts: 2, LastStatusCode: 200, LastAttemptTime: at(75)},
		Settled: true,
		Conditions: []metav1.Condition{condition(v1alpha1.ConditionReady, metav1.ConditionTrue, "Succeeded", "agent exited with code 0"),
			condition(v1alpha1.ConditionComplete, metav1.ConditionTrue, "Succeeded", "agent exited with code 0")},
	}
	k.createTask(done)
	runGolden(t, k, []getCase{
		{golden: "get-task-stuck", args: []string{"get", "agenttask", "stuck"}},
		{golden: "get-task-stuck-terminal", args: []string{"get", "task", "stuck", "--color=always"}},
		{golden: "get-task-succeeded", args: []string{"get", "at", "research-fetch-0"}},
		{golden: "get-task-json", args: []string{"get", "onat", "research-fetch-0", "-o", "json"}},
	})
}

// TestGetUserDeployment shows an app stalled on a missing template (its
// reason first, then the conditions) and a ready one.
func TestGetUserDeployment(t *testing.T) {
	k := newCluster(t, "get-ud")
	blog := testkit.MakeUserDeployment("blog", "", "u1").Template("wordpress").Obj()
	notFound := `DeploymentTemplate "wordpress" not found: create it or pick another template`
	blog.Status = v1alpha1.UserDeploymentStatus{
		Phase: v1alpha1.PhasePending,
		Conditions: []metav1.Condition{
			condition(v1alpha1.ConditionReady, metav1.ConditionFalse, "TemplateNotFound", notFound),
			condition(v1alpha1.ConditionStalled, metav1.ConditionTrue, "TemplateNotFound", notFound),
			condition("TemplateResolved", metav1.ConditionFalse, "TemplateNotFound", notFound),
		},
	}
	k.createUserDeployment(blog)
	shop := testkit.MakeUserDeployment("shop", "", "u1").Image("ghcr.io/acme/shop:3").Obj()
	shop.Spec.ContainerPort = new(int32(8080))
	shop.Status = v1alpha1.UserDeploymentStatus{
		Phase: v1alpha1.PhaseReady, ReadyReplicas: 2, Namespace: "user-u1", LastReconcile: at(100),
		Ingresses: []v1alpha1.IngressStatus{{Service: "web", Host: "shop.u1.example.com",
			URL: "https://shop.u1.example.com", Visibility: v1alpha1.VisibilityPublic}},
		Conditions: []metav1.Condition{
			condition(v1alpha1.ConditionReady, metav1.ConditionTrue, "Ready", "all services are ready"),
			condition("IngressReady", metav1.ConditionTrue, "Ready", "served on 1 URL"),
		},
	}
	k.createUserDeployment(shop)
	runGolden(t, k, []getCase{
		{golden: "get-userdeployment-stuck", args: []string{"get", "userdeployment", "blog"}},
		{golden: "get-userdeployment-stuck-terminal", args: []string{"get", "ud", "blog", "--color=always"}},
		{golden: "get-userdeployment-ready", args: []string{"get", "onud", "shop"}},
	})
}
