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
		name      string
		state     State
		wantReady metav1.ConditionStatus
		// wantTrue are the conditions besides Ready, all True; no other may be present.
		wantTrue []string
	}{
		{name: "in progress", state: InProgress, wantReady: metav1.ConditionFalse, wantTrue: []string{v1alpha1.ConditionReconciling}},
		{name: "current", state: Current, wantReady: metav1.ConditionTrue},
		{name: "failed", state: Failed, wantReady: metav1.ConditionFalse, wantTrue: []string{v1alpha1.ConditionStalled, v1alpha1.ConditionFailed}},
		{name: "stalled", state: Stalled, wantReady: metav1.ConditionFalse, wantTrue: []string{v1alpha1.ConditionStalled}},
		{name: "paused", state: Paused, wantReady: metav1.ConditionFalse},
		{name: "succeeded", state: Succeeded, wantReady: metav1.ConditionTrue, wantTrue: []string{v1alpha1.ConditionComplete}},
	}
	for _, tt := range tests {
		// From every state, so each condition has to appear or go.
		for _, from := range tests {
			t.Run(tt.name+" from "+from.name, func(t *testing.T) {
				var conds []metav1.Condition
				SetSummary(&conds, 1, from.state, "Start", "start")

				assert.True(t, SetSummary(&conds, 7, tt.state, "Why", "because"))
				ready := meta.FindStatusCondition(conds, v1alpha1.ConditionReady)
				if assert.NotNil(t, ready) {
					assert.Equal(t, tt.wantReady, ready.Status)
				}
				got := []string{}
				for _, c := range conds {
					assert.Equal(t, "Why", c.Reason, c.Type)
					assert.Equal(t, "because", c.Message, c.Type)
					assert.Equal(t, int64(7), c.ObservedGeneration, c.Type)
					if c.Type != v1alpha1.ConditionReady {
						assert.Equal(t, metav1.ConditionTrue, c.Status, "%s: conditions that are not True are removed", c.Type)
						got = append(got, c.Type)
					}
				}
				assert.ElementsMatch(t, tt.wantTrue, got)

				assert.False(t, SetSummary(&conds, 7, tt.state, "Why", "because"), "same summary again must report no change")
			})
		}
	}
}
