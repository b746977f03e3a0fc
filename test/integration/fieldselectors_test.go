package integration

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/testenv"
)

// fieldSelectorsNamespace holds the objects of TestFieldSelectors only, so
// a list of the namespace is exactly what the test created.
const fieldSelectorsNamespace = "it-field-selectors"

// TestFieldSelectors lists AgentTasks, Workflows and UserDeployments by
// their selectable fields spec.userId and status.phase, as `kubectl get
// --field-selector spec.userId=alice,status.phase=Failed` does, and gets
// exactly the objects that match.
func TestFieldSelectors(t *testing.T) {
	env := testenv.Require(t)
	cs := newSchedulerClient(t, env.Config)
	ensureNamespace(t, env.Config, fieldSelectorsNamespace)

	t.Run(kindAgentTask, func(t *testing.T) {
		testFieldSelectors(t, cs, agentTaskFixture, string(schedulerv1alpha1.TaskFailed), string(schedulerv1alpha1.TaskSucceeded),
			func(a *agentTask, user, phase string) {
				a.Spec.UserID, a.Status.Phase = user, schedulerv1alpha1.TaskPhase(phase)
			})
	})
	t.Run(kindWorkflow, func(t *testing.T) {
		testFieldSelectors(t, cs, workflowFixture, string(schedulerv1alpha1.WorkflowFailed), string(schedulerv1alpha1.WorkflowRunning),
			func(w *workflow, user, phase string) {
				w.Spec.UserID, w.Status.Phase = user, schedulerv1alpha1.WorkflowPhase(phase)
			})
	})
	t.Run(kindUserDeployment, func(t *testing.T) {
		testFieldSelectors(t, cs, userDeploymentFixture, string(schedulerv1alpha1.PhaseError), string(schedulerv1alpha1.PhaseReady),
			func(u *userDeployment, user, phase string) {
				u.Spec.UserID, u.Status.Phase = user, schedulerv1alpha1.DeploymentPhase(phase)
			})
	})
}

// testFieldSelectors creates five objects of fx's kind (two of alice's
// failed, one of hers in phase other, one of hers with no status yet, one
// of bob's failed) and lists them by user and phase.
func testFieldSelectors[T object, L runtime.Object, A any](t *testing.T, cs versioned.Interface, fx kindFixture[T, L, A],
	failed, other string, set func(obj T, user, phase string)) {
	ctx := t.Context()
	c := fx.client(cs, fieldSelectorsNamespace)
	suffix := rand.String(6)
	alice, bob := "alice-"+suffix, "bob-"+suffix
	create := func(user, phase string) string {
		obj := fx.newObject(fieldSelectorsNamespace, uniqueName(user))
		set(obj, user, "")
		created, err := c.Create(ctx, obj, metav1.CreateOptions{})
		require.NoError(t, err)
		cleanupTyped(t, c, created.GetName())
		if phase != "" {
			set(created, user, phase)
			_, err = c.UpdateStatus(ctx, created, metav1.UpdateOptions{})
			require.NoError(t, err)
		}
		return created.GetName()
	}
	aliceFailed := []string{create(alice, failed), create(alice, failed)}
	aliceOther, aliceNew := create(alice, other), create(alice, "")
	bobFailed := create(bob, failed)

	list := func(selector string) []string {
		t.Helper()
		l, err := c.List(ctx, metav1.ListOptions{FieldSelector: selector})
		require.NoError(t, err, selector)
		return fx.names(l)
	}
	assert.ElementsMatch(t, aliceFailed, list("spec.userId="+alice+",status.phase="+failed))
	assert.ElementsMatch(t, append([]string{aliceOther, aliceNew}, aliceFailed...), list("spec.userId="+alice))
	assert.ElementsMatch(t, append([]string{bobFailed}, aliceFailed...), list("status.phase="+failed))
	assert.ElementsMatch(t, []string{aliceOther, aliceNew}, list("spec.userId="+alice+",status.phase!="+failed),
		"an object with no phase yet is not failed")
	assert.Empty(t, list("spec.userId="+bob+",status.phase="+other))

	_, err := c.List(ctx, metav1.ListOptions{FieldSelector: "spec.image=x"})
	assert.True(t, apierrors.IsBadRequest(err), "a field that is not selectable is refused: %v", err)
}
