package conditions

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func TestSetSummary(t *testing.T) {
	tests := []struct {
		name            string
		state           State
		wantReady       metav1.ConditionStatus
		wantReconciling bool
		wantStalled     bool
	}{
		{name: "in progress", state: InProgress, wantReady: metav1.ConditionFalse, wantReconciling: true},
		{name: "current", state: Current, wantReady: metav1.ConditionTrue},
		{name: "failed", state: Failed, wantReady: metav1.ConditionFalse},
		{name: "stalled", state: Stalled, wantReady: metav1.ConditionFalse, wantStalled: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Start from the opposite summary so every condition has to move.
			var conds []metav1.Condition
			SetSummary(&conds, 1, InProgress, "Start", "start")
			SetSummary(&conds, 1, Stalled, "Start", "start")

			assert.True(t, SetSummary(&conds, 7, tt.state, "Why", "because"))
			ready := meta.FindStatusCondition(conds, v1alpha1.ConditionReady)
			if assert.NotNil(t, ready) {
				assert.Equal(t, tt.wantReady, ready.Status)
				assert.Equal(t, "Why", ready.Reason)
				assert.Equal(t, "because", ready.Message)
				assert.Equal(t, int64(7), ready.ObservedGeneration)
			}
			assert.Equal(t, tt.wantReconciling, meta.IsStatusConditionTrue(conds, v1alpha1.ConditionReconciling))
			assert.Equal(t, tt.wantStalled, meta.IsStatusConditionTrue(conds, v1alpha1.ConditionStalled))
			assert.Nil(t, findFalse(conds), "false abnormal-true conditions must be removed")

			assert.False(t, SetSummary(&conds, 7, tt.state, "Why", "because"), "same summary again must report no change")
		})
	}
}

func findFalse(conds []metav1.Condition) *metav1.Condition {
	for i, c := range conds {
		if c.Type != v1alpha1.ConditionReady && c.Status != metav1.ConditionTrue {
			return &conds[i]
		}
	}
	return nil
}
