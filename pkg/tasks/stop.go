package tasks

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// stopJob deletes the Job of a task that was cancelled, or that ended
// before its agent started (it could not start, or was evicted or deleted
// before it ran), while the Job had not concluded: a cancelled agent must
// stop, and otherwise the Job would keep trying to run an agent whose
// result nobody reads (the Job controller recreating a refused pod, a
// pending pod starting once its image pulls). The garbage collector removes
// its pods. A concluded Job, or one whose agent ran, is left to its TTL.
//
// It runs after the terminal status is written, so the task's reason is
// never JobDeleted; a failed delete is retried from the task's next
// reconcile, which finds the task settled and gone from the cache
// (stopSettledJob). Until then it is kept in memory only: a manager that
// restarts in between leaves that Job to the task's deletion.
func (r *Reconciler) stopJob(ctx context.Context, task *v1alpha1.AgentTask, job *batchv1.Job) error {
	st := &task.Status
	stoppable := (st.StartTime == nil && st.ExitCode == nil) || st.Reason == ReasonCancelled
	if job == nil || !st.Phase.IsTerminal() || !stoppable ||
		concluded(job) || job.DeletionTimestamp != nil || !metav1.IsControlledBy(job, task) {
		return nil
	}
	key := types.NamespacedName{Namespace: job.Namespace, Name: job.Name}
	if err := r.deleteJob(ctx, key, job.UID); err != nil {
		r.stops.Store(key, job.UID)
		return err
	}
	return nil
}

// stopSettledJob retries the delete of a Job stopJob failed to delete.
func (r *Reconciler) stopSettledJob(ctx context.Context, key types.NamespacedName) error {
	uid, ok := r.stops.Load(key)
	if !ok {
		return nil
	}
	if err := r.deleteJob(ctx, key, uid.(types.UID)); err != nil {
		return err
	}
	r.stops.Delete(key)
	return nil
}

func (r *Reconciler) deleteJob(ctx context.Context, key types.NamespacedName, uid types.UID) error {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	err := r.client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &uid})
	switch {
	case err == nil:
		ctrl.LoggerFrom(ctx).Info("stopped the job of a task that ended before its agent did", "job", key.Name)
		return nil
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return nil // gone, or another Job of that name now (UID precondition)
	}
	return errorf(errJobDelete, "delete job %s: %w", key, err)
}

// concluded reports whether job completed or failed (or is certain to).
func concluded(job *batchv1.Job) bool {
	return jobCondition(job, batchv1.JobComplete) != nil || failure(job) != nil
}
