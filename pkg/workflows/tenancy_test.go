package workflows_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/tenancy"
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
