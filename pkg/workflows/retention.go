package workflows

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// retentionDue returns when a finished workflow is to be deleted; false for
// never: it has no TTL (its own, else def; negative keeps it) or its
// webhook is still due. The TTL counts from its completionTime.
func retentionDue(wf *v1alpha1.Workflow, def int32) (time.Time, bool) {
	ttl := def
	if wf.Spec.TTLSecondsAfterFinished != nil {
		ttl = *wf.Spec.TTLSecondsAfterFinished
	}
	if ttl < 0 || !wf.Status.Phase.IsTerminal() || webhookDue(wf) {
		return time.Time{}, false
	}
	end := wf.CreationTimestamp.Time
	if t := wf.Status.CompletionTime; t != nil {
		end = t.Time
	}
	return end.Add(time.Duration(ttl) * time.Second), true
}

// collect deletes a finished workflow at the end of its TTL, its step
// tasks with it (their owner), in the manner of the Job TTL controller, and
// returns how long to wait when it is not due yet. The cache holds every
// workflow, so a new leader finds the ones an earlier one left.
func (r *Reconciler) collect(ctx context.Context, wf *v1alpha1.Workflow) (time.Duration, error) {
	at, ok := retentionDue(wf, r.defaultTTL)
	if !ok {
		return 0, nil
	}
	if wait := at.Sub(r.now()); wait > 0 {
		return wait, nil
	}
	background := metav1.DeletePropagationBackground
	err := r.client.SchedulerV1alpha1().Workflows(wf.Namespace).Delete(ctx, wf.Name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wf.UID}, PropagationPolicy: &background})
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return 0, nil // gone, or a new workflow of that name
	case err != nil:
		return 0, fmt.Errorf("delete workflow %s/%s: %w", wf.Namespace, wf.Name, err)
	}
	CollectedTotal.WithLabelValues(wf.Namespace).Inc()
	ctrl.LoggerFrom(ctx).Info("deleted a finished workflow at the end of its TTL", "completionTime", wf.Status.CompletionTime)
	return 0, nil
}
