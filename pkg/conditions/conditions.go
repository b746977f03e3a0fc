// Package conditions sets the kstatus-style conditions (Ready, Reconciling,
// Stalled) every kind carries, so `kubectl wait --for=condition=Ready` and
// kstatus-aware tools read our objects without custom code.
package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// State is the kstatus summary of an object.
type State int

const (
	// InProgress: the manager is working towards the spec (Reconciling=True).
	InProgress State = iota
	// Current: the object reached what its spec asks (Ready=True).
	Current
	// Failed: the object ended in failure; no retry will change it (Ready=False).
	Failed
	// Stalled: progress needs a change by a human (Stalled=True, Ready=False).
	Stalled
	// Paused: a human paused the object on purpose (Ready=False, neither
	// Reconciling nor Stalled), e.g. a suspended Workflow.
	Paused
)

// SetSummary sets Ready, Reconciling and Stalled for state with one reason and
// message, stamped with generation. Reconciling and Stalled are removed when
// false, as kstatus expects ("abnormal-true" conditions). It reports whether
// anything changed; LastTransitionTime only moves when a status flips.
func SetSummary(conds *[]metav1.Condition, generation int64, state State, reason, message string) bool {
	ready := metav1.ConditionFalse
	if state == Current {
		ready = metav1.ConditionTrue
	}
	changed := meta.SetStatusCondition(conds, metav1.Condition{
		Type: v1alpha1.ConditionReady, Status: ready, Reason: reason, Message: message, ObservedGeneration: generation,
	})
	changed = setOrRemove(conds, v1alpha1.ConditionReconciling, state == InProgress, generation, reason, message) || changed
	changed = setOrRemove(conds, v1alpha1.ConditionStalled, state == Stalled, generation, reason, message) || changed
	return changed
}

func setOrRemove(conds *[]metav1.Condition, condType string, on bool, generation int64, reason, message string) bool {
	if !on {
		return meta.RemoveStatusCondition(conds, condType)
	}
	return meta.SetStatusCondition(conds, metav1.Condition{
		Type: condType, Status: metav1.ConditionTrue, Reason: reason, Message: message, ObservedGeneration: generation,
	})
}
