// Package conditions sets the kstatus conditions (Ready, Reconciling,
// Stalled) every reconciled kind carries, plus the Job-like Complete and
// Failed of the kinds that run to completion, so `kubectl wait` and
// kstatus-aware tools (Flux, cli-utils, kpt) read our objects without
// custom code.
//
// kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status.Compute) reads them in
// this order: status.observedGeneration behind metadata.generation is
// InProgress; then Reconciling=True is InProgress and Stalled=True is Failed;
// then Ready=True is Current and Ready=False InProgress; an object with none
// of these (one the manager has not written yet) is Current. So each state
// below sets at most one of Reconciling and Stalled.
package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// State is the kstatus summary of an object.
type State int

const (
	// InProgress: the manager is working towards the spec (Ready=False,
	// Reconciling=True). kstatus: InProgress.
	InProgress State = iota
	// Current: the object reached what its spec asks (Ready=True).
	// kstatus: Current.
	Current
	// Failed: a run-to-completion object (AgentTask, Workflow) ended in
	// failure (Ready=False, Stalled=True, Failed=True, no Complete), as a
	// Job's Failed. kstatus: Failed.
	Failed
	// Stalled: progress needs a change by a human (Ready=False,
	// Stalled=True). kstatus: Failed.
	Stalled
	// Paused: a human paused the object on purpose (Ready=False, neither
	// Reconciling nor Stalled), e.g. a suspended Workflow. kstatus:
	// InProgress, from Ready=False.
	Paused
	// Succeeded: a run-to-completion object finished successfully
	// (Ready=True, Complete=True, no Failed), as a Job's Complete.
	// kstatus: Current.
	Succeeded
)

// SetSummary sets Ready, Reconciling, Stalled, Complete and Failed for state
// with one reason and message, stamped with generation. All but Ready are
// removed when not True: Reconciling and Stalled are "abnormal-true" for
// kstatus, and a Job carries Complete or Failed only once it ended. It
// reports whether anything changed; LastTransitionTime only moves when a
// status flips.
func SetSummary(conds *[]metav1.Condition, generation int64, state State, reason, message string) bool {
	ready := metav1.ConditionFalse
	if state == Current || state == Succeeded {
		ready = metav1.ConditionTrue
	}
	changed := meta.SetStatusCondition(conds, metav1.Condition{
		Type: v1alpha1.ConditionReady, Status: ready, Reason: reason, Message: message, ObservedGeneration: generation,
	})
	for _, c := range []struct {
		condType string
		on       bool
	}{
		{v1alpha1.ConditionReconciling, state == InProgress},
		{v1alpha1.ConditionStalled, state == Stalled || state == Failed},
		{v1alpha1.ConditionComplete, state == Succeeded},
		{v1alpha1.ConditionFailed, state == Failed},
	} {
		changed = setOrRemove(conds, c.condType, c.on, generation, reason, message) || changed
	}
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
