package plugin

import (
	"io"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// renderUserDeployment writes a UserDeployment's summary and conditions,
// what keeps it stuck first.
func (o *Options) renderUserDeployment(w io.Writer, ud *v1alpha1.UserDeployment) error {
	s, now := o.style(), o.Now()
	if st := userDeploymentStuck(ud); st != nil {
		if _, err := io.WriteString(w, s.banner(st)); err != nil {
			return err
		}
	}
	if err := userDeploymentFields(ud, s, now).write(w); err != nil {
		return err
	}
	if len(ud.Status.Conditions) == 0 {
		return nil
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return conditionTable(ud, s, now).write(w)
}

// userDeploymentStuck is a Stalled app, one Ready=False that the manager is
// not working on, or one in phase error.
func userDeploymentStuck(ud *v1alpha1.UserDeployment) *stuck {
	st := &ud.Status
	if s := stuckOf(st.Conditions, st.Phase == v1alpha1.PhaseDeleted); s != nil {
		return s
	}
	if st.Phase == v1alpha1.PhaseError {
		return &stuck{reason: "Error", message: st.LastError}
	}
	return nil
}

func userDeploymentFields(ud *v1alpha1.UserDeployment, s style, now time.Time) *summary {
	st := &ud.Status
	f := &summary{}
	f.add("Name", ud.Name)
	f.add("Namespace", ud.Namespace)
	f.add("User", ud.Spec.UserID)
	f.add("Template", ud.Spec.Template)
	f.add("Image", ud.Spec.Image)
	f.add("Tier", ud.Spec.Tier)
	f.add("Desired", string(ud.Spec.DesiredState))
	f.add("Phase", s.phase(string(st.Phase)))
	f.add("Ready pods", strconv.Itoa(int(st.ReadyReplicas)))
	f.add("App namespace", st.Namespace)
	urls := make([]string, 0, len(st.Ingresses))
	for _, in := range st.Ingresses {
		urls = append(urls, in.URL)
	}
	f.add("URLs", strings.Join(urls, ", "))
	f.add("Last error", st.LastError)
	f.add("Last change", timestamp(st.LastReconcile, now))
	return f
}

// conditionState is how a condition looks: Reconciling and Stalled are
// "abnormal-true" (kstatus), every other condition is good when True.
func conditionState(c metav1.Condition) state {
	switch {
	case c.Status == metav1.ConditionUnknown:
		return stateOf("Unknown")
	case c.Type == v1alpha1.ConditionReconciling && c.Status == metav1.ConditionTrue:
		return stateOf("Running")
	case c.Type == v1alpha1.ConditionStalled && c.Status == metav1.ConditionTrue:
		return stateOf("False")
	case c.Type == v1alpha1.ConditionReconciling || c.Type == v1alpha1.ConditionStalled:
		return stateOf("True")
	}
	return stateOf(string(c.Status))
}

// conditionTable lists the conditions, the way kubectl describe does.
func conditionTable(ud *v1alpha1.UserDeployment, s style, now time.Time) *table {
	t := &table{}
	t.add("CONDITION", "STATUS", "REASON", "AGE", "MESSAGE")
	for _, c := range ud.Status.Conditions {
		status := string(c.Status)
		if s.fancy {
			st := conditionState(c)
			status = s.paint(st.tone, st.symbol+" "+status)
		}
		t.add(c.Type, status, c.Reason, duration.HumanDuration(now.Sub(c.LastTransitionTime.Time)),
			s.truncate(c.Message, messageWidth*2))
	}
	return t
}
