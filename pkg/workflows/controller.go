package workflows

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	listers "opsnorth.io/scheduler/generated/listers/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/refusal"
	"opsnorth.io/scheduler/pkg/tenancy"
	"opsnorth.io/scheduler/pkg/webhook"
)

// conflictRetry is how often a workflow blocked by a foreign AgentTask of
// the same name looks again.
const conflictRetry = 10 * time.Second

// Reconciler runs Workflows as AgentTasks.
type Reconciler struct {
	workflows  func(namespace string) listers.WorkflowNamespaceLister
	tasks      func(namespace string) listers.AgentTaskNamespaceLister
	client     versioned.Interface
	recorder   events.EventRecorder
	fieldOwner string
	deliveries *webhook.Service
	bindings   *tenancy.Bindings
	budget     Budget
	now        func() time.Time
	hops       *hopTracker
	signer     *stepSigner
	// phases are the reconcile's phases, built once.
	phases []manager.Phase[*scope]

	// written is this manager's last status write per workflow: while the
	// informer still serves the version that write replaced, decisions are
	// made on the written object (the API server's answer) instead of the
	// stale cached one. This is what keeps a step hop to one write.
	written manager.LastWrites[*v1alpha1.Workflow]
	// defaultTTL keeps finished workflows without a TTL of their own this
	// long; negative keeps them.
	defaultTTL int32
	// created holds the tasks this manager created that its cache may not
	// hold yet, by namespace/name, until the cache has them or they are deleted.
	created sync.Map
}

// startRounds bounds the create-then-decide-again rounds of one reconcile
// (see decide).
const startRounds = 3

// scope is one reconcile's working state.
type scope struct {
	wf   *v1alpha1.Workflow
	obs  *observation
	plan plan
	// retry, when set, is returned after the status is written, so the work
	// queue backs the workflow off (a transient refusal the status reports).
	retry error
}

// Reconcile brings one Workflow forward: fetch → observe its tasks and
// decide → start steps → the webhook condition → write status once, if it
// changed → stop the tasks of a finished workflow. A finished workflow only
// has its stray tasks stopped and its webhook scheduled.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	wf, err := r.workflows(req.Namespace).Get(req.Name)
	if apierrors.IsNotFound(err) {
		r.written.Forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("get workflow: %w", err)
	}
	wf = r.latest(ctx, req.NamespacedName, wf).DeepCopy()
	if wf.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	stored := wf.Status
	if wf.Status.Phase.IsTerminal() {
		if !retryRequested(wf) {
			return r.finished(ctx, wf)
		}
		// The next run is decided on right away: one status write starts it.
		wf = wf.DeepCopy()
		wf.Status = retryStatus(wf, r.now())
	}
	s := &scope{wf: wf}
	if err := manager.RunPhases(ctx, s, r.phases...); err != nil {
		return ctrl.Result{}, err
	}
	if !equality.Semantic.DeepEqual(stored, s.plan.status) {
		written, err := r.writeStatus(ctx, wf, &s.plan.status)
		if err != nil || !written {
			return ctrl.Result{}, err
		}
		if stored.Retries != s.plan.status.Retries {
			r.recorder.Eventf(wf, nil, "Normal", ReasonRetried, "Retry", "%s", wf.Status.Message)
		}
		r.announce(wf, &s.plan)
	}
	if s.plan.status.Phase.IsTerminal() {
		return ctrl.Result{}, r.stopTasks(ctx, wf, s.obs.tasks)
	}
	if s.retry != nil {
		return ctrl.Result{}, s.retry
	}
	return ctrl.Result{RequeueAfter: s.plan.requeue}, nil
}

// observeTasks reads the workflow's step tasks and decides what to do.
func (r *Reconciler) observeTasks(ctx context.Context, s *scope) (bool, error) {
	obs, err := r.gather(ctx, s.wf)
	if err != nil {
		return false, err
	}
	s.obs, s.plan = obs, decide(obs)
	return false, nil
}

// startSteps creates the step tasks the plan starts and decides again, for
// at most startRounds rounds. A task of a step's name that another owner
// holds stalls the workflow until it is gone.
func (r *Reconciler) startSteps(ctx context.Context, s *scope) (bool, error) {
	var conflict *v1alpha1.AgentTask
	for round := 0; len(s.plan.starts) > 0 && conflict == nil && round < startRounds; round++ {
		var err error
		if conflict, err = r.createStepTasks(ctx, s.obs, s.plan); err != nil {
			ref := refusal.Of(err)
			if ref.Reason == "" {
				return false, err
			}
			// A refusal that can heal: backed off by the work queue, while
			// the status says why the step has not started.
			msg := fmt.Sprintf("the API server refused a step's AgentTask (%s), retrying: %s", ref.Reason, ref.Message)
			s.plan.status.Message = msg
			conditions.SetSummary(&s.plan.status.Conditions, s.wf.Generation, conditions.InProgress, ref.Reason, msg)
			s.retry = err
			return false, nil
		}
		s.plan = decide(s.obs)
	}
	if conflict != nil {
		reason, msg := ReasonTaskNameConflict, fmt.Sprintf("AgentTask %s exists and is not owned by this workflow; delete it to continue", conflict.Name)
		if isStepOf(conflict, s.wf) {
			reason, msg = ReasonStepTaskNotOwned, fmt.Sprintf("AgentTask %s names this workflow as its owner but was not created by the workflows manager "+
				"(annotation %s is missing or does not match); it is not used as a step: delete it to continue", conflict.Name, AnnotationStepSignature)
		}
		s.plan.status.Message = msg
		conditions.SetSummary(&s.plan.status.Conditions, s.wf.Generation, conditions.Stalled, reason, msg)
		s.plan.requeue = conflictRetry
	}
	return false, nil
}

// webhookCondition shows a finished workflow's webhook delivery.
func (r *Reconciler) webhookCondition(_ context.Context, s *scope) (bool, error) {
	if st := &s.plan.status; st.Phase.IsTerminal() && s.wf.Spec.WebhookURL != "" {
		meta.SetStatusCondition(&st.Conditions, webhook.Condition(st.Webhook, s.wf.Generation))
	}
	return false, nil
}

// finished handles a workflow whose terminal status is stored: no step task
// may still run, the completion webhook is scheduled while it is due, and
// the workflow is deleted at the end of its TTL.
func (r *Reconciler) finished(ctx context.Context, wf *v1alpha1.Workflow) (ctrl.Result, error) {
	tasks, err := r.ownedTasks(wf)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.stopTasks(ctx, wf, tasks); err != nil {
		return ctrl.Result{}, err
	}
	if webhookDue(wf) {
		// Delivered on the service's own pool, never on this worker.
		r.deliveries.Schedule(types.NamespacedName{Namespace: wf.Namespace, Name: wf.Name}, wf.Spec.WebhookURL, wf.Status.Webhook)
	}
	wait, err := r.collect(ctx, wf)
	return ctrl.Result{RequeueAfter: wait}, err
}

// latest returns the newest known version of wf: the cached one, unless the
// cache still serves the version this manager's last status write replaced.
func (r *Reconciler) latest(ctx context.Context, key types.NamespacedName, wf *v1alpha1.Workflow) *v1alpha1.Workflow {
	written, ok := r.written.Latest(key, wf)
	if ok {
		logf.FromContext(ctx).V(1).Info("cache lags behind the last status write; using the written workflow",
			"cached", wf.ResourceVersion, "written", written.ResourceVersion)
	}
	return written
}

// createStepTasks creates the planned step attempts and adds them to obs.
// It returns a task of a step's name that is not that step.
func (r *Reconciler) createStepTasks(ctx context.Context, obs *observation, p plan) (*v1alpha1.AgentTask, error) {
	wf := obs.wf
	for _, s := range p.starts {
		task := buildTask(wf, s.step, s.attempt, s.input)
		r.signer.sign(wf, task)
		created, err := r.client.SchedulerV1alpha1().AgentTasks(wf.Namespace).Create(ctx, task, createOptions(r.fieldOwner))
		if apierrors.IsAlreadyExists(err) {
			created, err = r.client.SchedulerV1alpha1().AgentTasks(wf.Namespace).Get(ctx, task.Name, getOptions)
			if err == nil && !r.signer.isStep(created, wf) {
				return created, nil
			}
			if err == nil {
				obs.withTask(created)
				continue
			}
		}
		if err != nil {
			err = fmt.Errorf("create AgentTask %s for step %q: %w", task.Name, wf.Spec.Steps[s.step].Name, err)
			if ref := refusal.Of(err); ref.Terminal {
				obs.refuse(s.step, ref)
				continue
			}
			return nil, err
		}
		obs.withTask(created)
		r.created.Store(k8sName(created.Namespace, created.Name), created)
		logf.FromContext(ctx).V(1).Info("started step", "step", wf.Spec.Steps[s.step].Name, "attempt", s.attempt, "task", created.Name)
		if s.attempt == 0 {
			r.hops.observeHop(obs, p.status.StepStatuses, s.step, r.now())
		}
	}
	return nil, nil
}

// stopTasks deletes the workflow's tasks that have not finished, once the
// workflow is terminal.
func (r *Reconciler) stopTasks(ctx context.Context, wf *v1alpha1.Workflow, tasks map[string]*v1alpha1.AgentTask) error {
	var errs []error
	for _, t := range tasks {
		if t.Status.Phase.IsTerminal() || t.DeletionTimestamp != nil {
			continue
		}
		err := r.client.SchedulerV1alpha1().AgentTasks(wf.Namespace).Delete(ctx, t.Name, deleteOptions(t.UID))
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("stop AgentTask %s: %w", t.Name, err))
			continue
		}
		logf.FromContext(ctx).Info("stopped step task", "task", t.Name, "phase", wf.Status.Phase)
	}
	return errors.Join(errs...)
}

// announce emits events and metrics for what the written status changed.
func (r *Reconciler) announce(wf *v1alpha1.Workflow, p *plan) {
	prev, next := &wf.Status, &p.status
	for _, s := range next.StepStatuses {
		old := prevStep(prev, s.Name)
		if old != nil && old.Phase == s.Phase {
			continue
		}
		// A step's start and success are in status (with its task and
		// times); an Event each cost ten writes per 5-step workflow, which
		// delayed the step hops of lockstep workflows. Failures stay Events.
		if s.Phase == v1alpha1.StepFailed {
			r.recorder.Eventf(wf, nil, "Warning", "StepFailed", "Reconcile", "step %q failed: %s", s.Name, s.Message)
		}
	}
	if prev.StartTime == nil && next.StartTime != nil {
		StartedTotal.Inc()
	}
	if !prev.Phase.IsTerminal() && next.Phase.IsTerminal() {
		CompletedTotal.WithLabelValues(string(next.Phase), p.reason).Inc()
		Duration.WithLabelValues(string(next.Phase)).Observe(next.CompletionTime.Sub(next.StartTime.Time).Seconds())
		kind := "Normal"
		if next.Phase == v1alpha1.WorkflowFailed {
			kind = "Warning"
		}
		r.recorder.Eventf(wf, nil, kind, "Workflow"+string(next.Phase), "Reconcile", "%s", next.Message)
	}
}
