package agents

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	ossaacv1 "opsnorth.io/scheduler/generated/applyconfiguration/ossa/v1"
	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/deployments/agents/resolve"
	"opsnorth.io/scheduler/pkg/deployments/children"
	"opsnorth.io/scheduler/pkg/refusal"
)

// Reasons of the Ready, Reconciling and Stalled conditions (and of the
// events on phase changes). While the Deployment rolls out, Ready also
// carries the reason of a ReplicaFailure (refusal.OfMessage) or of what
// keeps the pods from running ready (podcause.ReasonImagePullFailed,
// podcause.ReasonCrashLooping, ...).
const (
	// ReasonUnsupportedRuntime: runtime.type is local, serverless or edge.
	ReasonUnsupportedRuntime = "UnsupportedRuntime"
	// ReasonInvalidCapabilitySchema: a capability's input_schema or
	// output_schema is no valid JSON Schema; the message names both.
	ReasonInvalidCapabilitySchema = "InvalidCapabilitySchema"
	// ReasonTierLimitExceeded: spec.replicas, autoscaling.maxReplicas, a
	// cpu or memory request or a GPU is above the namespace's tier (the
	// UserDeployment controller's reason for the same); the message names
	// each field and its limit.
	ReasonTierLimitExceeded = "TierLimitExceeded"
	// ReasonUnknownTier: the namespace's max-tier label (or
	// --default-max-tier) names no known tier.
	ReasonUnknownTier = "UnknownTier"
	// ReasonDependencyCycle: the required dependencies form a cycle.
	ReasonDependencyCycle = resolve.ReasonDependencyCycle
	// ReasonWaitingForDependencies: a required dependency is not met and
	// the agent does not run yet.
	ReasonWaitingForDependencies = "WaitingForDependencies"
	// ReasonChildConflict: a child's name is taken by another owner (the
	// UserDeployment controller's reason for the same).
	ReasonChildConflict = "ChildConflict"
	// ReasonInvalidSpec: the children cannot be built from the spec.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonReconcileError: a transient failure the controller retries.
	ReasonReconcileError = "ReconcileError"
	// ReasonProgressing: the Deployment is rolling out.
	ReasonProgressing = "Progressing"
	// ReasonReady: every replica is ready.
	ReasonReady = "Ready"
	// ReasonProgressDeadlineExceeded: the Deployment controller gave up on
	// the rollout.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
)

// The kstatus conditions every kind carries (pkg/conditions sets them).
const (
	conditionReady   = v1alpha1.ConditionReady
	conditionStalled = v1alpha1.ConditionStalled
)

// conflictRetry is how often an Agent whose child name another owner holds
// looks again: a foreign object carries none of the labels the caches
// select, so no event says when it goes.
const conflictRetry = time.Minute

// stalledError is a refusal no retry fixes: a change of the spec (or of
// another Agent, for a cycle) does. prune deletes the children.
type stalledError struct {
	reason, msg string
	prune       bool
}

func (e *stalledError) Error() string { return e.msg }

func stalled(reason, msg string, prune bool) error {
	return &stalledError{reason: reason, msg: msg, prune: prune}
}

func (s *scope) setCondition(t string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&s.status.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason,
		Message: msg, ObservedGeneration: s.agent.Generation})
}

// summarize sets the phase and the kstatus summary (Ready, Reconciling, Stalled).
func (s *scope) summarize(p ossav1.AgentPhase, state conditions.State, reason, msg string) {
	s.status.Phase = p
	s.status.ObservedGeneration = s.agent.Generation
	conditions.SetSummary(&s.status.Conditions, s.agent.Generation, state, reason, msg)
	s.stallReason = ""
	if state == conditions.Stalled {
		s.stallReason = reason
	}
}

// stall sets phase Stalled with reason and msg.
func (s *scope) stall(reason, msg string) {
	s.summarize(ossav1.AgentStalled, conditions.Stalled, reason, msg)
}

// stalledAlready reports whether the cached status shows this stall for
// the current generation.
func (s *scope) stalledAlready(reason, msg string) bool {
	c := meta.FindStatusCondition(s.agent.Status.Conditions, conditionStalled)
	return c != nil && c.Reason == reason && c.Message == msg && c.ObservedGeneration == s.agent.Generation
}

// clearWorkload reports that nothing of the Agent runs.
func (s *scope) clearWorkload() {
	s.status.Replicas, s.status.ReadyReplicas, s.status.Endpoint = 0, 0, ""
	s.status.Selector = Selector(s.agent)
}

// onError records err in the status and decides how to retry.
func (r *Reconciler) onError(ctx context.Context, s *scope, err error) (ctrl.Result, error) {
	if st, ok := errors.AsType[*stalledError](err); ok {
		if st.prune {
			s.desired = nil
			if _, perr := r.pruneChildren(ctx, s); perr != nil {
				return ctrl.Result{}, perr
			}
			s.clearWorkload()
		}
		known := s.stalledAlready(st.reason, st.msg)
		s.stall(st.reason, st.msg)
		if known || st.reason == ReasonDependencyCycle {
			// Reported already, or a change of another Agent ends it: no
			// error to log again on every event.
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	if _, ok := errors.AsType[*children.ConflictError](err); ok {
		s.stall(ReasonChildConflict, err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	ref := refusal.Of(err)
	if ref.Terminal {
		s.stall(ref.Reason, err.Error())
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("reconcile failed", "error", err.Error())
	reason := ReasonReconcileError
	if ref.Reason != "" {
		reason = ref.Reason
	}
	phase := s.status.Phase
	if phase == "" || phase == ossav1.AgentStalled {
		phase = ossav1.AgentProgressing
	}
	s.summarize(phase, conditions.InProgress, reason, err.Error())
	return ctrl.Result{}, err
}

// writeStatus applies the status when it differs from the cached one and
// records an event when the phase (or the reason of a stall) changed.
func (r *Reconciler) writeStatus(ctx context.Context, old *ossav1.Agent, s *scope) error {
	if equality.Semantic.DeepEqual(old.Status, s.status) {
		return nil
	}
	// The resourceVersion makes a status computed from a stale cached
	// object fail instead of overwriting a newer one.
	ac := ossaacv1.Agent(s.agent.Name, s.agent.Namespace).WithUID(s.agent.UID).
		WithResourceVersion(s.agent.ResourceVersion).WithStatus(statusApply(&s.status))
	if _, err := r.clientset.OssaV1().Agents(s.agent.Namespace).ApplyStatus(ctx, ac,
		metav1.ApplyOptions{FieldManager: r.owner, Force: true}); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return nil // deleted meanwhile
		case apierrors.IsConflict(err):
			ctrl.LoggerFrom(ctx).V(1).Info("status not written: the cached Agent is stale")
			return nil // its update event reconciles again
		}
		return fmt.Errorf("write status: %w", err)
	}
	oldStall := ""
	if c := meta.FindStatusCondition(old.Status.Conditions, conditionStalled); c != nil {
		oldStall = c.Reason
	}
	if old.Status.Phase != s.status.Phase || s.stallReason != "" && s.stallReason != oldStall {
		ctrl.LoggerFrom(ctx).Info("phase changed", "from", old.Status.Phase, "to", s.status.Phase, "reason", s.stallReason)
		r.phaseChanged(s)
	}
	return nil
}

// phaseChanged records an event named after the new phase, or after the
// reason of a stall, with the Ready condition's message.
func (r *Reconciler) phaseChanged(s *scope) {
	eventType, reason := corev1.EventTypeNormal, string(s.status.Phase)
	if s.stallReason != "" {
		eventType, reason = corev1.EventTypeWarning, s.stallReason
	}
	note := "phase " + string(s.status.Phase)
	if c := meta.FindStatusCondition(s.status.Conditions, conditionReady); c != nil && c.Message != "" {
		note += ": " + c.Message
	}
	r.recorder.Eventf(s.agent, nil, eventType, reason, "Reconcile", "%s", note)
}

func statusApply(st *ossav1.AgentStatus) *ossaacv1.AgentStatusApplyConfiguration {
	ac := ossaacv1.AgentStatus().WithObservedGeneration(st.ObservedGeneration).WithReplicas(st.Replicas).
		WithReadyReplicas(st.ReadyReplicas).WithCapabilityCount(st.CapabilityCount)
	if st.Phase != "" {
		ac.WithPhase(st.Phase)
	}
	if st.Selector != "" {
		ac.WithSelector(st.Selector)
	}
	if st.Endpoint != "" {
		ac.WithEndpoint(st.Endpoint)
	}
	for _, d := range st.Dependencies {
		dep := ossaacv1.ResolvedDependency().WithAgentID(d.AgentID).WithReady(d.Ready)
		if d.Agent != "" {
			dep.WithAgent(d.Agent)
		}
		if d.Version != "" {
			dep.WithVersion(d.Version)
		}
		if d.Optional {
			dep.WithOptional(true)
		}
		if d.Message != "" {
			dep.WithMessage(d.Message)
		}
		ac.WithDependencies(dep)
	}
	for _, c := range st.Conditions {
		ac.WithConditions(metav1ac.Condition().WithType(c.Type).WithStatus(c.Status).WithReason(c.Reason).
			WithMessage(c.Message).WithObservedGeneration(c.ObservedGeneration).WithLastTransitionTime(c.LastTransitionTime))
	}
	return ac
}
