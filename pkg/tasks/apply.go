package tasks

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	ac "opsnorth.io/scheduler/generated/applyconfiguration/scheduler/v1alpha1"
)

// maxEventNote is the longest note an events.k8s.io Event accepts.
const maxEventNote = 1024

// applyStatus writes st as the task's whole status with server-side apply
// under the manager's field owner. The apply carries the task's
// resourceVersion, so a reconcile working from a stale cache gets a Conflict
// instead of overwriting a newer status (a recorded terminal phase, a
// delivered webhook) with an older one. The written task is what the next
// reconcile decides on until the cache has it (manager.LastWrites).
func (r *Reconciler) applyStatus(ctx context.Context, task *v1alpha1.AgentTask, st v1alpha1.AgentTaskStatus) (*v1alpha1.AgentTask, error) {
	status, err := statusApplyConfiguration(st)
	if err != nil {
		return nil, errorf(errStatusWrite, "build status of agenttask %s/%s: %w", task.Namespace, task.Name, err)
	}
	cfg := ac.AgentTask(task.Name, task.Namespace).WithResourceVersion(task.ResourceVersion).WithStatus(status)
	updated, err := r.clientset.SchedulerV1alpha1().AgentTasks(task.Namespace).
		ApplyStatus(ctx, cfg, metav1.ApplyOptions{FieldManager: r.fieldOwner, Force: true})
	if err != nil {
		return nil, errorf(errStatusWrite, "apply status of agenttask %s/%s: %w", task.Namespace, task.Name, err)
	}
	trimmed, _ := trimTask(updated.DeepCopy())
	r.written.Store(types.NamespacedName{Namespace: task.Namespace, Name: task.Name}, task.ResourceVersion, trimmed.(*v1alpha1.AgentTask))
	if updated.Status.Settled && r.retention != nil {
		r.retention.schedule(updated)
	}
	return updated, nil
}

// statusApplyConfiguration converts a status to its apply configuration; the
// two share one JSON shape.
func statusApplyConfiguration(st v1alpha1.AgentTaskStatus) (*ac.AgentTaskStatusApplyConfiguration, error) {
	data, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	out := &ac.AgentTaskStatusApplyConfiguration{}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, err
	}
	return out, nil
}

// recordTransition counts a written phase change and reports it as an event.
// The durations are observed with the write that first records the start
// time or the pod: once per task, whatever the pod or the manager do after.
func (r *Reconciler) recordTransition(ctx context.Context, s *scope, old v1alpha1.AgentTaskStatus, task *v1alpha1.AgentTask) {
	st, ns := task.Status, task.Namespace
	if job := s.obs.Job; job != nil {
		if old.StartTime == nil && st.StartTime != nil {
			StartupDuration.WithLabelValues(ns).Observe(max(0, st.StartTime.Sub(job.CreationTimestamp.Time).Seconds()))
		}
		if pod := s.obs.Pod; old.PodName == "" && pod != nil && st.PodName == pod.Name {
			PodCreationDuration.WithLabelValues(ns).Observe(max(0, pod.CreationTimestamp.Sub(job.CreationTimestamp.Time).Seconds()))
		}
	}
	if old.Phase == st.Phase {
		return
	}
	PhaseTransitionsTotal.WithLabelValues(ns, phaseLabel(old.Phase), phaseLabel(st.Phase)).Inc()
	if st.Phase.IsTerminal() {
		CompletedTotal.WithLabelValues(ns, string(st.Phase)).Inc()
	}
	ctrl.LoggerFrom(ctx).Info("phase changed", "from", old.Phase, "to", st.Phase, "reason", st.Reason)
	// Only the end of a task is an Event: Pending and Running are in status
	// (with their times) and the Job controller records its own Job's
	// creation. One Event per task instead of one per phase took a third
	// of the tasks manager's writes off the API server (see the README's
	// performance section).
	//
	// A workflow's step task has none: its Workflow reports the step (in
	// status, with a StepFailed Event if it fails, and with its own end), so
	// the task's Event said the same thing a second time.
	if !st.Phase.IsTerminal() || isStepTask(task) {
		return
	}
	eventType := corev1.EventTypeNormal
	if st.Phase == v1alpha1.TaskFailed || st.Phase == v1alpha1.TaskTimeout {
		eventType = corev1.EventTypeWarning
	}
	r.event(task, eventType, string(st.Phase), "PhaseChange", st.Message)
}

// event records an events.k8s.io Event about task; the note is cut to fit.
func (r *Reconciler) event(task *v1alpha1.AgentTask, eventType, reason, action, note string) {
	if len(note) > maxEventNote {
		note = note[:maxEventNote-3] + "..."
	}
	r.recorder.Eventf(task, nil, eventType, reason, action, "%s", note)
}

// describe is a short "namespace/name" for messages.
func describe(task *v1alpha1.AgentTask) string {
	return fmt.Sprintf("%s/%s", task.Namespace, task.Name)
}

// isStepTask reports whether a Workflow controls task: it is one of its steps.
func isStepTask(task *v1alpha1.AgentTask) bool {
	ref := metav1.GetControllerOf(task)
	return ref != nil && ref.Kind == "Workflow" && ref.APIVersion == v1alpha1.SchemeGroupVersion.String()
}
