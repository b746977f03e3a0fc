package tasks

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/refusal"
)

// predecessorWait is how often a task waits for the Job of a deleted task of
// the same name to be garbage collected.
const predecessorWait = 5 * time.Second

// scope is one reconcile's working state.
type scope struct {
	// task is the task as cached, then as written.
	task *v1alpha1.AgentTask
	obs  Observation
	// status is the status to write, computed from base; nil writes nothing.
	status *v1alpha1.AgentTaskStatus
	base   *v1alpha1.AgentTask
	// requeue is when to look again although no watch reports a change.
	requeue time.Duration
	// retry, when set, is returned after the status is written, so the work
	// queue backs the task off (a transient refusal the status reports).
	retry error
}

// Reconcile creates the task's Job once, records the Job's and pod's truth
// in status (one write, only when it changed) and, once the task is
// terminal, schedules its completion webhook with the delivery service.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.reconcile(ctx, req)
	return res, countError(req.Namespace, err)
}

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	task, err := r.getTask(req.NamespacedName)
	if apierrors.IsNotFound(err) {
		// Settled (the cache holds unsettled tasks only) or deleted: what
		// the manager kept for the task goes, its Job's record included
		// (Jobs are named after their tasks), once a Job its settled task
		// left running is stopped.
		if err := r.stopSettledJob(ctx, req.NamespacedName); err != nil {
			return ctrl.Result{}, err
		}
		r.finished.forget(req.NamespacedName)
		r.jobs.forget(req.NamespacedName)
		r.written.Forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, errorf(errAPIRead, "get agenttask %s: %w", req, err)
	}
	task, _ = r.written.Latest(req.NamespacedName, task)
	if task.DeletionTimestamp != nil || task.Status.Phase.IsTerminal() {
		// Forgotten once the cache shows the outcome: a reconcile of a
		// stale cached copy still finds the pod without another read.
		r.finished.forget(req.NamespacedName)
	}
	if task.DeletionTimestamp != nil {
		return ctrl.Result{}, nil // the garbage collector removes the Job
	}
	log := ctrl.LoggerFrom(ctx).WithValues("taskId", task.Spec.TaskID, "phase", task.Status.Phase)
	ctx = ctrl.LoggerInto(ctx, log)

	s := &scope{task: task.DeepCopy(), obs: Observation{Now: r.now(), StartTimeout: r.cfg.DefaultStartTimeout}}
	phases := r.running
	if task.Status.Phase.IsTerminal() {
		// A terminal task's status is final (its spec is immutable) and the
		// cache keeps only its phase and webhook state (trimTask): only the
		// webhook may still be due, or Settled missing.
		phases = r.terminal
	}
	if err := manager.RunPhases(ctx, s, phases...); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.writeStatus(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.stopJob(ctx, s.task, s.obs.Job); err != nil {
		return ctrl.Result{}, err
	}
	if webhookDue(s.task) {
		// Delivered on the service's own pool, never on this worker.
		r.deliveries.Schedule(req.NamespacedName, s.task.Spec.WebhookURL, s.task.Status.Webhook)
	}
	if s.retry != nil {
		return ctrl.Result{}, s.retry
	}
	return ctrl.Result{RequeueAfter: s.requeue}, nil
}

// writeStatus writes the status the phases computed, if any, guarded by
// the version it was computed from, and reports the phase change.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope) error {
	if s.status == nil {
		return nil
	}
	old := s.base.Status
	updated, err := r.applyStatus(ctx, s.base, *s.status)
	if err != nil {
		return err
	}
	r.recordTransition(ctx, s, old, updated)
	s.task = updated
	return nil
}

// settleLegacy computes Settled for a task that is done but does not show
// it: one that an older manager, before the field existed, finished. Every
// other terminal status is written with Settled already. The cache holds a
// trimmed status, so the write starts from a live read.
func (r *Reconciler) settleLegacy(ctx context.Context, s *scope) (bool, error) {
	if st := &s.task.Status; st.Settled || !settled(st, s.task) {
		return false, nil
	}
	live, err := r.clientset.SchedulerV1alpha1().AgentTasks(s.task.Namespace).Get(ctx, s.task.Name, metav1.GetOptions{})
	if err != nil {
		return false, errorf(errAPIRead, "get agenttask %s: %w", describe(s.task), err)
	}
	if live.UID != s.task.UID || live.Status.Settled || !settled(&live.Status, live) {
		return false, nil
	}
	st := *live.Status.DeepCopy()
	summarize(&st, live)
	s.base, s.status = live, &st
	return false, nil
}

// ensureJob finds the task's Job or creates it, exactly once.
func (r *Reconciler) ensureJob(ctx context.Context, s *scope) (bool, error) {
	key := types.NamespacedName{Namespace: s.task.Namespace, Name: JobName(s.task)}
	job, err := r.jobs.get(key)
	switch {
	case err != nil:
		return false, errorf(errAPIRead, "get job %s: %w", key, err)
	case job != nil:
		r.adopt(s, job)
		return false, nil
	case s.task.Status.JobName != "":
		// The task recorded its Job but the cache has none: ask the API
		// server, the cache may lag behind. Never create the Job again.
		return false, r.confirmJob(ctx, s, key)
	case s.task.Spec.Cancel:
		return false, nil // cancelled before it had a Job: none is made
	}
	return false, r.createJob(ctx, s)
}

func (r *Reconciler) confirmJob(ctx context.Context, s *scope, key types.NamespacedName) error {
	job := &batchv1.Job{}
	err := r.apiReader.Get(ctx, key, job)
	switch {
	case apierrors.IsNotFound(err):
		s.obs.JobGone = true
		return nil
	case err != nil:
		return errorf(errAPIRead, "get job %s: %w", key, err)
	}
	r.adopt(s, job)
	return nil
}

// createJob creates the task's Job unless the task's namespace does not
// admit its user (tenancy.CheckBinding) or the task names an object it may not use: either fails it
// at once with the field named. A missing object, or a Secret without the
// keys env and envFrom need, keeps it Pending with the reason
// (checkReferences, checkSecretKeys). A refusal no retry can fix fails it with
// the API server's message; a transient one is retried with backoff while
// the status says why (package refusal). The name is fixed, so when another
// reconcile (another worker, a previous leader) created it first the API
// server answers AlreadyExists and the existing Job is adopted if it is the
// task's own.
func (r *Reconciler) createJob(ctx context.Context, s *scope) error {
	denial, err := r.bindings.Check(s.task.Namespace, s.task.Spec.UserID)
	if err != nil {
		return err
	}
	if denial.Denied() {
		s.obs.FailReason, s.obs.FailMessage = denial.Reason, denial.Message
		return nil
	}
	if reason, refused := podViolation(s.task, r.cfg.PodDefaults); refused != "" {
		s.obs.FailReason, s.obs.FailMessage = reason, refused
		return nil
	}
	problem, err := r.checkReferences(ctx, s.task)
	var keys SecretKeys
	if problem == nil && err == nil {
		keys, problem, err = r.checkSecretKeys(ctx, s.task)
	}
	switch {
	case err != nil:
		return err
	case problem != nil && problem.Wait:
		// Pending with the reason until the object exists (a Secret has
		// the keys) or the start deadline fails the task; a
		// ServiceAccount's creation is watched, Secrets are polled.
		s.obs.WaitingReason, s.obs.Waiting = problem.Reason, problem.Message
		if problem.Kind != "ServiceAccount" {
			s.requeue = minPositive(s.requeue, missingSecretPoll)
		}
		return nil
	case problem != nil:
		s.obs.FailReason, s.obs.FailMessage = problem.Reason, problem.Message
		return nil
	}
	job := BuildJob(s.task, r.cfg, keys)
	err = r.client.Create(ctx, job, client.FieldOwner(r.fieldOwner))
	switch {
	case err == nil:
		CreatedTotal.WithLabelValues(job.Namespace).Inc()
		JobCreationDuration.WithLabelValues(job.Namespace).Observe(job.CreationTimestamp.Sub(s.task.CreationTimestamp.Time).Seconds())
		ctrl.LoggerFrom(ctx).Info("created job", "job", job.Name)
		s.obs.Job = job
		return nil
	case apierrors.IsAlreadyExists(err):
		return r.confirmJob(ctx, s, client.ObjectKeyFromObject(job))
	}
	err = errorf(errJobCreate, "create job %s/%s: %w", job.Namespace, job.Name, err)
	switch ref := refusal.Of(err); {
	case ref.Terminal:
		// Counted here: the reconcile ends without an error.
		ErrorsTotal.WithLabelValues(job.Namespace, errJobCreate).Inc()
		reason := ref.Reason
		if reason == refusal.ReasonInvalid {
			reason = ReasonJobInvalid
		}
		s.obs.FailReason, s.obs.FailMessage = reason, "the API server refused the task's Job: "+ref.Message
		return nil
	case ref.Reason != "":
		// Backed off by the work queue; the status says why meanwhile.
		s.obs.WaitingReason = ref.Reason
		s.obs.Waiting = fmt.Sprintf("the API server refused the task's Job (%s), retrying: %s", ref.Reason, ref.Message)
		s.retry = err
		return nil
	}
	return err
}

// adopt takes job as the task's Job if the task controls it. A Job left by
// a deleted task of the same name is waited for: the garbage collector
// removes it. Any other Job of that name fails the task.
func (r *Reconciler) adopt(s *scope, job *batchv1.Job) {
	if metav1.IsControlledBy(job, s.task) {
		s.obs.Job = job
		return
	}
	if ref := metav1.GetControllerOf(job); ref != nil && ref.Kind == "AgentTask" && ref.Name == s.task.Name && s.task.Status.JobName == "" {
		s.obs.Waiting = fmt.Sprintf("waiting for Job %s of a deleted AgentTask of the same name to be garbage collected", job.Name)
		s.requeue = predecessorWait
		return
	}
	ErrorsTotal.WithLabelValues(s.task.Namespace, errJobConflict).Inc()
	s.obs.FailReason = ReasonJobConflict
	s.obs.FailMessage = fmt.Sprintf("Job %s already exists and is not owned by this AgentTask; delete it or rename the task", job.Name)
}

// observePod finds the pod of the task's Job. The cache holds only running
// pods (selectRunningPods), so the API server is asked when the cache cannot
// tell: once the Job concluded (the finished pod holds the agent's exit code
// and output), and when a pod of the task has left the cache before that
// (it finished, or was deleted: PodGone if the task had recorded it).
func (r *Reconciler) observePod(ctx context.Context, s *scope) (bool, error) {
	job := s.obs.Job
	if job == nil {
		return false, nil
	}
	key := types.NamespacedName{Namespace: s.task.Namespace, Name: s.task.Name}
	done := concluded(job)
	name := s.task.Status.PodName
	if name == "" {
		name = r.finished.leftPod(key)
	}
	if !done {
		pods, err := r.cachedPods(job)
		if err != nil {
			return false, errorf(errAPIRead, "list pods of job %s: %w", job.Name, err)
		}
		if s.obs.Pod = newestPod(podsOf(pods, job)); s.obs.Pod != nil {
			return false, nil
		}
		if name == "" {
			// No pod yet: the Job controller's events say why, if it failed.
			s.obs.CreateFailure, err = r.createFailure(job)
			return false, err
		}
	}
	if pod := r.finished.get(key, job); pod != nil {
		s.obs.Pod = pod
		return false, nil
	}
	pod, err := r.livePod(ctx, s.task, name, job)
	if err != nil {
		return false, err
	}
	r.finished.put(key, pod)
	s.obs.Pod = pod
	s.obs.PodGone = pod == nil && !done && s.task.Status.PodName != ""
	if pod == nil && !done && s.task.Status.PodName == "" {
		// The pod that left the cache was deleted before it ran.
		r.finished.unleave(key)
		s.obs.CreateFailure, err = r.createFailure(job)
	}
	return false, err
}

// livePod reads the Job's newest pod from the API server: by name, if
// known (one GET), else by the task's label.
func (r *Reconciler) livePod(ctx context.Context, task *v1alpha1.AgentTask, name string, job *batchv1.Job) (*corev1.Pod, error) {
	if name != "" {
		pod := &corev1.Pod{}
		err := r.apiReader.Get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: name}, pod)
		switch {
		case err == nil && metav1.IsControlledBy(pod, job):
			return pod, nil
		case err != nil && !apierrors.IsNotFound(err):
			return nil, errorf(errAPIRead, "get pod %s/%s: %w", job.Namespace, name, err)
		}
	}
	live := &corev1.PodList{}
	if err := r.apiReader.List(ctx, live, client.InNamespace(job.Namespace),
		client.MatchingLabels{labelkeys.AgentTask: task.Name}); err != nil {
		return nil, errorf(errAPIRead, "list pods of job %s: %w", job.Name, err)
	}
	return newestPod(podsOf(live.Items, job)), nil
}

// podsOf returns the pods that job controls.
func podsOf(pods []corev1.Pod, job *batchv1.Job) []corev1.Pod {
	out := pods[:0:0]
	for _, p := range pods {
		if metav1.IsControlledBy(&p, job) {
			out = append(out, p)
		}
	}
	return out
}

// computeStatus computes the status from the observation; it is written
// when it differs from the stored one, unless a new task's Pending waits.
func (r *Reconciler) computeStatus(_ context.Context, s *scope) (bool, error) {
	old := s.task.Status
	st := ComputeStatus(s.task, s.obs)
	if st.Phase == v1alpha1.TaskPending {
		// Nothing but the clock fails a task whose agent does not start.
		if deadline := startDeadline(s.task, s.obs.Job, s.obs.StartTimeout); !deadline.IsZero() {
			s.requeue = minPositive(s.requeue, deadline.Sub(s.obs.Now)+10*time.Millisecond)
		}
	}
	if equality.Semantic.DeepEqual(old, st) {
		return false, nil
	}
	if wait := r.pendingDelay(old, st, s.obs); wait > 0 {
		s.requeue = minPositive(s.requeue, wait)
		return false, nil
	}
	s.base, s.status = s.task, &st
	return false, nil
}

// pendingDelay is how much longer a new task waits before its first status,
// Pending, is written: until cfg.PendingStatusDelay after its Job was
// created. A task waiting for something else than its pod (a predecessor's
// Job) has no Job yet, and one whose pod cannot start has a reason: both
// are shown at once.
func (r *Reconciler) pendingDelay(old, st v1alpha1.AgentTaskStatus, obs Observation) time.Duration {
	if old.Phase != "" || st.Phase != v1alpha1.TaskPending || obs.Job == nil || st.Reason != "" {
		return 0
	}
	return max(0, obs.Job.CreationTimestamp.Add(r.cfg.PendingStatusDelay).Sub(obs.Now))
}

func minPositive(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}
