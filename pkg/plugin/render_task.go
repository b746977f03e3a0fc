package plugin

import (
	"io"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// renderTask writes an AgentTask's summary, what keeps it stuck first.
func (o *Options) renderTask(w io.Writer, task *v1alpha1.AgentTask) error {
	s, now := o.style(), o.Now()
	if st := taskStuck(task); st != nil {
		if _, err := io.WriteString(w, s.banner(st)); err != nil {
			return err
		}
	}
	return taskFields(task, s, now).write(w)
}

// taskStuck is a Stalled task, or one Pending for a reason (its agent
// cannot start: ImagePullBackOff, Unschedulable, QuotaExceeded, ...).
func taskStuck(task *v1alpha1.AgentTask) *stuck {
	st := &task.Status
	if s := stuckOf(st.Conditions, st.Phase.IsTerminal()); s != nil {
		return s
	}
	if (st.Phase == v1alpha1.TaskPending || st.Phase == "") && st.Reason != "" {
		return &stuck{reason: st.Reason, message: st.Message}
	}
	return nil
}

func taskFields(task *v1alpha1.AgentTask, s style, now time.Time) *summary {
	st := &task.Status
	f := &summary{}
	f.add("Name", task.Name)
	f.add("Namespace", task.Namespace)
	f.add("User", task.Spec.UserID)
	f.add("Task ID", task.Spec.TaskID)
	if wf := task.Labels[labelkeys.Workflow]; wf != "" {
		f.add("Workflow", wf+", step "+task.Labels[labelkeys.Step])
	}
	f.add("Image", task.Spec.Image)
	f.add("Phase", s.phase(string(st.Phase)))
	f.add("Reason", st.Reason)
	f.add("Message", st.Message)
	if st.ExitCode != nil {
		f.add("Exit code", strconv.Itoa(int(*st.ExitCode)))
	}
	if task.Spec.Cancel && !st.Phase.IsTerminal() {
		f.add("Cancel", "requested")
	}
	f.add("Started", timestamp(st.StartTime, now))
	f.add("Finished", timestamp(st.CompletionTime, now))
	f.add("Duration", elapsed(st.StartTime, st.CompletionTime, now))
	f.add("Job", st.JobName)
	f.add("Pod", st.PodName)
	output := keys(st.Output)
	if meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionOutputTruncated) {
		output += " (truncated)"
	}
	f.add("Output", output)
	if wh := st.Webhook; wh != nil {
		f.add("Webhook", webhookLine(wh, s, now))
	}
	return f
}

// webhookLine summarises a completion webhook's delivery.
func webhookLine(wh *v1alpha1.WebhookDelivery, s style, now time.Time) string {
	parts := []string{"not delivered yet"}
	switch {
	case wh.Delivered:
		parts[0] = "delivered"
	case wh.GaveUp:
		parts[0] = "given up"
	}
	if wh.Attempts > 0 {
		parts = append(parts, strconv.Itoa(int(wh.Attempts))+" attempt(s)")
	}
	if wh.LastStatusCode != 0 {
		parts = append(parts, "last status "+strconv.Itoa(int(wh.LastStatusCode)))
	}
	if wh.LastError != "" {
		parts = append(parts, "last error: "+s.truncate(wh.LastError, messageWidth))
	}
	if wh.LastAttemptTime != nil {
		parts = append(parts, "last at "+timestamp(wh.LastAttemptTime, now))
	}
	return strings.Join(parts, ", ")
}
