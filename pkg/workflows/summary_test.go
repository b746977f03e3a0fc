package workflows

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// summaries are the conditions besides Ready that decide sets True for each
// phase; no other summary condition may be present (Stalled without Failed
// is the controller's, for a step task it cannot use).
var summaries = map[v1alpha1.WorkflowPhase][]string{
	v1alpha1.WorkflowRunning:   {v1alpha1.ConditionReconciling},
	v1alpha1.WorkflowSuspended: {ConditionSuspended},
	v1alpha1.WorkflowSucceeded: {v1alpha1.ConditionComplete},
	v1alpha1.WorkflowFailed:    {v1alpha1.ConditionStalled, v1alpha1.ConditionFailed},
}

// assertSummary checks the kstatus and Job-like conditions of st against
// its phase, and that Ready is True exactly when it succeeded.
func assertSummary(t *testing.T, st v1alpha1.WorkflowStatus) {
	t.Helper()
	assert.Equal(t, st.Phase == v1alpha1.WorkflowSucceeded, meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionReady), "Ready of phase %s", st.Phase)
	var got []string
	for _, c := range st.Conditions {
		switch c.Type {
		case v1alpha1.ConditionReconciling, v1alpha1.ConditionStalled, v1alpha1.ConditionComplete, v1alpha1.ConditionFailed, ConditionSuspended:
			assert.Equal(t, metav1.ConditionTrue, c.Status, c.Type)
			got = append(got, c.Type)
		}
	}
	assert.ElementsMatch(t, summaries[st.Phase], got, "conditions of phase %s", st.Phase)
}
