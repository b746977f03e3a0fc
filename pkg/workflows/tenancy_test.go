package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/tenancy"
	"opsnorth.io/scheduler/pkg/testkit"
	"opsnorth.io/scheduler/pkg/workflows"
)

// TestTenantBinding: without the admission policy the manager itself fails
// a workflow whose namespace is bound to another user, before any step task
// exists; its own user's workflow runs.
func TestTenantBinding(t *testing.T) {
	k := newCluster(t)
	ns, err := k.kube.CoreV1().Namespaces().Get(t.Context(), k.ns, metav1.GetOptions{})
	require.NoError(t, err)
	ns.Labels = map[string]string{labelkeys.Tenant: "u1"}
	_, err = k.kube.CoreV1().Namespaces().Update(t.Context(), ns, metav1.UpdateOptions{})
	require.NoError(t, err)
	startManager(t, k.ns)

	k.create(stepWorkflow("own", step("a", nil)))
	k.waitTask("own", "a", 0)
	spoofed := stepWorkflow("spoofed", step("a", nil))
	spoofed.Spec.UserID = "bob"
	k.create(spoofed)
	failed := k.waitWorkflow("spoofed", v1alpha1.WorkflowFailed)
	want := `spec.userId: "bob" is not "u1", the user namespace ` + k.ns + ` is bound to (label scheduler.opsnorth.io/tenant)`
	assert.Equal(t, want, failed.Status.Message)
	ready := meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, tenancy.ReasonTenantMismatch, ready.Reason)
	assert.Equal(t, want, ready.Message)
	assert.Empty(t, k.taskNames("spoofed"), "no step task")
}

// TestForgedStepTask: without the admission policy, a user creates the
// second step's task first, with the workflow as its controller and the
// step's name. The manager does not take it for the step: the workflow
// stalls saying so, the forged output reaches no step, and once the task
// is deleted the manager creates its own and the workflow goes on.
func TestForgedStepTask(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns)
	wf := k.create(stepWorkflow("victim", step("draft", nil), step("publish", map[string]string{"TEXT": "${steps.draft.output.text}"}, "draft")))
	forged := &v1alpha1.AgentTask{
		ObjectMeta: metav1.ObjectMeta{Name: workflows.TaskName("victim", "publish", 0), Namespace: k.ns,
			Labels:          map[string]string{labelkeys.Workflow: "victim", labelkeys.Step: "publish"},
			Annotations:     map[string]string{workflows.AnnotationStepSignature: "00"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(wf, v1alpha1.SchemeGroupVersion.WithKind("Workflow"))}},
		Spec: v1alpha1.AgentTaskSpec{TaskID: "forged", UserID: "u1", Image: "mallory/exfiltrate:1", WebhookURL: "https://mallory.example/hook"},
	}
	_, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Create(t.Context(), forged, metav1.CreateOptions{})
	require.NoError(t, err)
	k.finish(k.waitTask("victim", "draft", 0), v1alpha1.TaskSucceeded, map[string]string{"text": "hello"})

	want := "AgentTask " + forged.Name + " names this workflow as its owner but was not created by the workflows manager " +
		"(annotation scheduler.opsnorth.io/step-signature is missing or does not match); it is not used as a step: delete it to continue"
	stalled := testkit.WaitFor(t, wait, func() *v1alpha1.Workflow { return k.workflow("victim") },
		func(wf *v1alpha1.Workflow) bool { return wf.Status.Message == want }, "the workflow never said why it stalled")
	c := meta.FindStatusCondition(stalled.Status.Conditions, "Stalled")
	require.NotNil(t, c)
	assert.Equal(t, workflows.ReasonStepTaskNotOwned, c.Reason)
	assert.Equal(t, v1alpha1.WorkflowRunning, stalled.Status.Phase)
	k.finish(forged, v1alpha1.TaskSucceeded, map[string]string{"leak": "forged"})
	assert.Never(t, func() bool { return k.workflow("victim").Status.Phase.IsTerminal() }, 2*time.Second, 100*time.Millisecond,
		"a forged task's result is not the step's")

	require.NoError(t, k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Delete(t.Context(), forged.Name, metav1.DeleteOptions{}))
	own := k.waitTask("victim", "publish", 0)
	assert.Equal(t, "hello", own.Spec.Input["TEXT"])
	assert.NotEqual(t, "mallory/exfiltrate:1", own.Spec.Image)
	assert.NotEmpty(t, own.Annotations[workflows.AnnotationStepSignature])
	k.finish(own, v1alpha1.TaskSucceeded, nil)
	k.waitWorkflow("victim", v1alpha1.WorkflowSucceeded)
}
