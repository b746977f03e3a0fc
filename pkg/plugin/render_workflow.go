package plugin

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// renderWorkflow writes a workflow the way `argo get` does: a header, then
// one line per step, as a tree of dependsOn for a DAG.
func (o *Options) renderWorkflow(w io.Writer, wf *v1alpha1.Workflow) error {
	s, now := o.style(), o.Now()
	// Only Stalled counts as stuck: a running or suspended workflow is
	// Ready=False by design, and the steps tell where it is.
	if st := stuckOf(wf.Status.Conditions, true); st != nil {
		if _, err := io.WriteString(w, s.banner(st)); err != nil {
			return err
		}
	}
	if err := workflowHeader(wf, s, now).write(w); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return stepTable(wf, s, now).write(w)
}

func workflowHeader(wf *v1alpha1.Workflow, s style, now time.Time) *summary {
	st := &wf.Status
	f := &summary{}
	f.add("Name", wf.Name)
	f.add("Namespace", wf.Namespace)
	f.add("User", wf.Spec.UserID)
	f.add("Phase", s.phase(string(st.Phase)))
	if reason := readyReason(st.Conditions); reason != string(st.Phase) {
		f.add("Reason", reason)
	}
	f.add("Message", st.Message)
	for _, name := range waitingApprovals(wf) {
		step, sst, err := findStep(wf, name)
		if err != nil || sst == nil {
			continue
		}
		f.add("Waiting", name+": "+s.truncate(stepMessage(*step, *sst, now), 4*messageWidth))
	}
	f.add("Suspended", suspension(wf, now))
	if wf.Spec.Stop && !st.Phase.IsTerminal() {
		f.add("Stop", "requested: running steps are being stopped")
	}
	f.add("Started", timestamp(st.StartTime, now))
	f.add("Finished", timestamp(st.CompletionTime, now))
	d := st.Duration
	if d == "" || st.CompletionTime == nil {
		d = elapsed(st.StartTime, st.CompletionTime, now)
	}
	f.add("Duration", d)
	retries := strconv.Itoa(int(st.Retries))
	if wf.Spec.Retry > st.Retries {
		retries += fmt.Sprintf(" (retry %d requested)", wf.Spec.Retry)
	}
	f.add("Retries", retries)
	for i, r := range st.RetryHistory {
		line := timestamp(&r.Time, now) + " after " + r.Reason
		if r.Message != "" {
			line += ": " + s.truncate(r.Message, messageWidth)
		}
		if len(r.Steps) > 0 {
			line += "; again: " + strings.Join(r.Steps, ", ")
		}
		f.add(fmt.Sprintf("Retry %d", i+1), line)
	}
	if st.Webhook != nil {
		f.add("Webhook", webhookLine(st.Webhook, s, now))
	}
	return f
}

// waitingApprovals are the approval steps waiting for a decision.
func waitingApprovals(wf *v1alpha1.Workflow) []string {
	var out []string
	for _, st := range wf.Status.StepStatuses {
		if st.Phase == v1alpha1.StepWaiting {
			out = append(out, st.Name)
		}
	}
	return out
}

// suspension says whether and since when the workflow is suspended, or
// that a suspend or resume was asked for and not yet acted on.
func suspension(wf *v1alpha1.Workflow, now time.Time) string {
	st := &wf.Status
	switch {
	case st.Phase == v1alpha1.WorkflowSuspended:
		text := "yes"
		if st.SuspendTime != nil {
			text += ", since " + timestamp(st.SuspendTime, now)
		}
		if st.SuspendedSeconds > 0 {
			text += fmt.Sprintf(", and %s before in this run", duration.HumanDuration(time.Duration(st.SuspendedSeconds)*time.Second))
		}
		if !wf.Spec.Suspend {
			text += "; resume requested"
		}
		return text
	case wf.Spec.Suspend && !st.Phase.IsTerminal():
		return "requested: no new step starts, running steps finish"
	case st.SuspendedSeconds > 0:
		return "no, " + duration.HumanDuration(time.Duration(st.SuspendedSeconds)*time.Second) + " in this run"
	}
	return ""
}

func stepTable(wf *v1alpha1.Workflow, s style, now time.Time) *table {
	status := map[string]v1alpha1.StepStatus{}
	for _, st := range wf.Status.StepStatuses {
		status[st.Name] = st
	}
	t := &table{}
	t.add("STEP", "PHASE", "DURATION", "ATTEMPTS", "TASK", "MESSAGE", "OUTPUT")
	for _, line := range stepTree(wf.Spec.Steps, s.branches()) {
		step := wf.Spec.Steps[line.step]
		st := status[step.Name]
		name := line.prefix + step.Name
		if s.fancy {
			name = line.prefix + s.symbol(string(st.Phase)) + " " + step.Name
		}
		if len(line.alsoOn) > 0 {
			name += " (also after " + strings.Join(line.alsoOn, ", ") + ")"
		}
		phase := string(st.Phase)
		if phase == "" {
			phase = string(v1alpha1.StepPending)
		}
		attempts := ""
		if st.Attempts > 0 {
			attempts = strconv.Itoa(int(st.Attempts))
		}
		output := keys(st.Output)
		if st.OutputTruncated {
			output += " (truncated)"
		}
		t.add(name, s.paint(stateOf(phase).tone, phase), elapsed(st.StartTime, st.CompletionTime, now),
			attempts, st.TaskName, s.truncate(stepMessage(step, st, now), messageWidth), output)
	}
	return t
}

// stepMessage explains a step: an approval step's wait or decision, a
// retrying step's next attempt, otherwise its reason and message.
func stepMessage(step v1alpha1.WorkflowStep, st v1alpha1.StepStatus, now time.Time) string {
	if step.Approval != nil {
		switch {
		case st.Approval != nil:
			text := "approved by " + st.Approval.By
			if st.Approval.Decision == v1alpha1.DecisionReject {
				text = "rejected by " + st.Approval.By
			}
			if st.Approval.Comment != "" {
				text += ": " + st.Approval.Comment
			}
			return text
		case st.Phase == v1alpha1.StepWaiting:
			msg := st.Message
			if msg == "" {
				msg = step.Approval.Message
			}
			return "waiting for approval: " + msg
		}
	}
	text := st.Message
	if st.Reason != "" && text != "" {
		text = st.Reason + ": " + text
	} else if st.Reason != "" {
		text = st.Reason
	}
	if st.Phase == v1alpha1.StepRetrying && st.NextAttemptTime != nil {
		next := "next attempt in " + duration.HumanDuration(st.NextAttemptTime.Sub(now))
		if text == "" {
			return next
		}
		text = next + "; " + text
	}
	return text
}
