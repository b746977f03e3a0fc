package integration

import (
	"strings"

	"k8s.io/utils/ptr"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// invalidWorkflowCases break one Workflow rule each.
func invalidWorkflowCases() []invalidCase {
	return append(reservedInputKeyCases("workflow step", "spec.steps[0].input", func(key string) objectFactory {
		return newWorkflow(func(w *workflow) { w.Spec.Steps[0].Input[key] = "x" })
	}), []invalidCase{
		{
			name:  "workflow name with a dot",
			obj:   newWorkflow(func(w *workflow) { w.Name = "nightly.report" }),
			field: objectRoot, msg: "metadata.name must be a DNS label",
		},
		{
			name:  "workflow userId with spaces",
			obj:   newWorkflow(func(w *workflow) { w.Spec.UserID = "alice smith" }),
			field: "spec.userId", msg: "should match",
		},
		{
			name:  "workflow without steps",
			obj:   newWorkflow(func(w *workflow) { w.Spec.Steps = []schedulerv1alpha1.WorkflowStep{} }),
			field: "spec.steps", msg: "should have at least 1 items",
		},
		{
			name:  "workflow missing steps",
			obj:   newWorkflow(nil),
			unset: []string{"spec.steps"},
			field: "spec.steps", msg: "Required value",
		},
		{
			name:  "workflow step name uppercase",
			obj:   newWorkflow(func(w *workflow) { w.Spec.Steps[2].Name = "Report" }),
			field: "spec.steps[2].name", msg: "should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'",
		},
		{
			name:  "workflow step name too long",
			obj:   newWorkflow(func(w *workflow) { w.Spec.Steps[2].Name = strings.Repeat("s", 41) }),
			field: "spec.steps[2].name", msg: "may not be more than 40",
		},
		{
			name:  "workflow duplicate step names",
			obj:   newWorkflow(func(w *workflow) { w.Spec.Steps[2].Name = "fetch" }),
			field: "spec.steps[2]", msg: "Duplicate value",
		},
		{
			name:  "workflow step image with spaces",
			obj:   newWorkflow(func(w *workflow) { w.Spec.Steps[0].Image = "fetch agent" }),
			field: "spec.steps[0].image", msg: "should match",
		},
		{
			name:  "workflow dependsOn names an unknown step",
			obj:   newWorkflow(func(w *workflow) { w.Spec.Steps[2].DependsOn = []string{"analyse"} }),
			field: "spec.steps", msg: "steps[].dependsOn must name steps of this workflow",
		},
		{
			name:  "workflow step depends on itself",
			obj:   newWorkflow(func(w *workflow) { w.Spec.Steps[2].DependsOn = []string{"analyze", "report"} }),
			field: "spec.steps", msg: "a step cannot depend on itself",
		},
		{
			name:  "workflow step input key not an env name",
			obj:   newWorkflow(func(w *workflow) { w.Spec.Steps[0].Input["9URL"] = "x" }),
			field: "spec.steps[0].input", msg: "input keys must be environment variable names",
		},
		{
			name:  "workflow step input over the total limit",
			obj:   newWorkflow(func(w *workflow) { w.Spec.Steps[0].Input = bulkyInput(9, 30000) }),
			field: "spec.steps[0].input", msg: "input must be at most 262144 bytes in all, keys and values together",
		},
		{
			name:  "workflow step input value too long",
			obj:   newWorkflow(func(w *workflow) { w.Spec.Steps[0].Input["URL"] = strings.Repeat("u", 32769) }),
			field: "spec.steps[0].input", msg: "each input value must be at most 32768 characters",
		},
		{
			name:  "workflow input key not an env name",
			obj:   newWorkflow(func(w *workflow) { w.Spec.Input["repo.url"] = "x" }),
			field: "spec.input", msg: "input keys must be letters, digits and '_'",
		},
		{
			name:  "workflow retries limit above 10",
			obj:   newWorkflow(func(w *workflow) { w.Spec.Steps[1].Retries.Limit = 11 }),
			field: "spec.steps[1].retries.limit", msg: "should be less than or equal to 10",
		},
		{
			name:  "workflow retries backoff above max backoff",
			obj:   newWorkflow(func(w *workflow) { w.Spec.Steps[1].Retries.BackoffSeconds = ptr.To[int32](600) }),
			field: "spec.steps[1].retries", msg: "backoffSeconds must not exceed maxBackoffSeconds",
		},
		{
			name:  "workflow step cpu request above limit",
			obj:   newWorkflow(func(w *workflow) { w.Spec.Steps[1].Resources.Requests.CPU = quantity("3") }),
			field: "spec.steps[1].resources", msg: "each request must not exceed the limit of the same resource",
		},
		{
			name:  "workflow step timeoutSeconds zero",
			obj:   newWorkflow(func(w *workflow) { w.Spec.Steps[1].TimeoutSeconds = ptr.To[int64](0) }),
			field: "spec.steps[1].timeoutSeconds", msg: "should be greater than or equal to 1",
		},
		{
			name:  "workflow timeoutSeconds zero",
			obj:   newWorkflow(func(w *workflow) { w.Spec.TimeoutSeconds = ptr.To[int64](0) }),
			field: "spec.timeoutSeconds", msg: "should be greater than or equal to 1",
		},
		{
			name:  "workflow webhookUrl ftp scheme",
			obj:   newWorkflow(func(w *workflow) { w.Spec.WebhookURL = "ftp://hooks.example.com/workflows" }),
			field: "spec.webhookUrl", msg: "webhookUrl must be an absolute http or https URL",
		},
		{
			name:  "workflow webhookSecretRef name uppercase",
			obj:   newWorkflow(func(w *workflow) { w.Spec.WebhookSecretRef.Name = "Workflow-Webhook" }),
			field: "spec.webhookSecretRef.name", msg: "should match",
		},
		{
			name:  "workflow missing userId",
			obj:   newWorkflow(nil),
			unset: []string{"spec.userId"},
			field: "spec.userId", msg: "Required value",
		},
		{
			name:   "workflow update spec",
			obj:    newWorkflow(nil),
			update: as(func(w *workflow) { w.Spec.Input["REPO_URL"] = "https://git.example.com/other.git" }),
			field:  "spec", msg: "spec is immutable apart from suspend, stop, retry and approvals",
		},
	}...)
}
