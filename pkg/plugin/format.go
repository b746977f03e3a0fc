package plugin

import (
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// messageWidth is how much of a message a table cell shows.
const messageWidth = 60

// timestamp renders t in UTC with its age: "2026-11-30T10:00:00Z (5m ago)".
func timestamp(t *metav1.Time, now time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339) + " (" + duration.HumanDuration(now.Sub(t.Time)) + " ago)"
}

// elapsed is the time from start to end, or to now when end is unset: the
// duration of something running.
func elapsed(start, end *metav1.Time, now time.Time) string {
	if start == nil {
		return ""
	}
	stop := now
	if end != nil {
		stop = end.Time
	}
	return duration.HumanDuration(stop.Sub(start.Time))
}

// keys lists a map's keys, sorted and comma-separated: outputs are shown by
// key only, as their values may be long or secret.
func keys(m map[string]string) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ",")
}

// stuck is what keeps an object from progressing, shown before anything
// else: a Stalled condition, or a Ready=False that nothing is working on.
type stuck struct{ reason, message string }

// stuckOf reads the kstatus conditions: Stalled=True wins unless Failed=True
// says it is a failed task's or workflow's end; Ready=False without
// Reconciling=True is stuck too unless the object ended (a failed task or
// workflow is finished, not stuck).
func stuckOf(conds []metav1.Condition, ended bool) *stuck {
	if meta.IsStatusConditionTrue(conds, v1alpha1.ConditionFailed) {
		return nil
	}
	if c := meta.FindStatusCondition(conds, v1alpha1.ConditionStalled); c != nil && c.Status == metav1.ConditionTrue {
		return &stuck{reason: c.Reason, message: c.Message}
	}
	if ended || meta.IsStatusConditionTrue(conds, v1alpha1.ConditionReconciling) {
		return nil
	}
	if c := meta.FindStatusCondition(conds, v1alpha1.ConditionReady); c != nil && c.Status == metav1.ConditionFalse {
		return &stuck{reason: c.Reason, message: c.Message}
	}
	return nil
}

// banner renders a stuck object's reason and message as the first line.
func (s style) banner(st *stuck) string {
	text := "STUCK: " + st.reason
	if s.fancy {
		text = "⚠ Stuck: " + st.reason
	}
	if st.message != "" {
		text += ": " + st.message
	}
	return s.paint(toneBad, text) + "\n\n"
}

// readyReason is the reason of a Ready condition that is not True: why a
// workflow is not done.
func readyReason(conds []metav1.Condition) string {
	if c := meta.FindStatusCondition(conds, v1alpha1.ConditionReady); c != nil && c.Status != metav1.ConditionTrue {
		return c.Reason
	}
	return ""
}
