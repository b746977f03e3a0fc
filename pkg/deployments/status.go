package deployments

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	schedacv1alpha1 "opsnorth.io/scheduler/generated/applyconfiguration/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/deployments/podcause"
	"opsnorth.io/scheduler/pkg/refusal"
)

// Condition types beyond Ready/Reconciling/Stalled.
const (
	ConditionTemplateResolved  = "TemplateResolved"
	ConditionDependenciesReady = "DependenciesReady"
	ConditionIngressReady      = "IngressReady"
)

// Condition reasons.
const (
	ReasonRawImage             = "RawImage"
	ReasonResolved             = "Resolved"
	ReasonTemplateNotFound     = "TemplateNotFound"
	ReasonInvalidSpec          = "InvalidSpec"
	ReasonUnknownTier          = "UnknownTier"
	ReasonTierExceeded         = "TierLimitExceeded"
	ReasonTierNotAllowed       = "TierNotAllowed"
	ReasonSecretKeyNotAllowed  = "SecretKeyNotAllowed"
	ReasonNoDependencies       = "NoDependencies"
	ReasonDependenciesReady    = "DependenciesReady"
	ReasonDependenciesNotReady = "DependenciesNotReady"
	ReasonHostConflict         = "HostConflict"
	ReasonHostReserved         = "HostReserved"
	ReasonHostsAssigned        = "HostsAssigned"
	ReasonChildConflict        = "ChildConflict"
	ReasonReconcileError       = "ReconcileError"
	ReasonProvisioning         = "Provisioning"
	ReasonReady                = "Ready"
	ReasonStopped              = "Stopped"
	ReasonDeleting             = "Deleting"
	ReasonDeleted              = "Deleted"
	ReasonNamespaceNotOwned    = "NamespaceNotOwned"
	ReasonNamespaceKept        = "NamespaceKept"
	ReasonClaimReattached      = "ClaimReattached"
	ReasonClaimsRetained       = "ClaimsRetained"
	ReasonTakingInventory      = "TakingInventory"
	ReasonNamespaceTerminating = "NamespaceTerminating"
)

// Reasons of a rollout that does not finish, from the cause found per
// service (blocked.go): phase provisioning names them, except
// ProgressDeadlineExceeded, which is phase error.
const (
	// ReasonProgressDeadlineExceeded: the Deployment controller gave up on
	// the rollout (Progressing=False); the message names the cause below.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonFailedCreate: the ReplicaSet cannot create pods for a reason
	// refusal.OfMessage does not name; it names exceeded quota
	// (QuotaExceeded), admission denials such as Pod Security
	// (AdmissionDenied) and a missing ServiceAccount (ServiceAccountNotFound).
	ReasonFailedCreate = refusal.ReasonFailedCreate
	// ReasonClaimPending: a volume claim is not bound; the message says why
	// (its event, or that it names no storage class).
	ReasonClaimPending = "ClaimPending"
	// ReasonClaimLost: a volume claim lost its volume.
	ReasonClaimLost = "ClaimLost"
	// The pods' causes (podcause): Unschedulable, InvalidImage,
	// ImagePullFailed, ContainerConfigError, ContainerStartFailed,
	// CrashLooping.
	ReasonUnschedulable        = podcause.ReasonUnschedulable
	ReasonInvalidImage         = podcause.ReasonInvalidImage
	ReasonImagePullFailed      = podcause.ReasonImagePullFailed
	ReasonContainerConfigError = podcause.ReasonContainerConfigError
	ReasonContainerStartFailed = podcause.ReasonContainerStartFailed
	ReasonCrashLooping         = podcause.ReasonCrashLooping
)

// stalledError is an input problem no retry can fix; a spec or template
// change (which triggers a reconcile) can.
type stalledError struct{ reason, msg string }

func (e *stalledError) Error() string { return e.msg }

func stalled(reason, msg string) error { return &stalledError{reason: reason, msg: msg} }

func (s *scope) setCondition(t string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&s.status.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason,
		Message: msg, ObservedGeneration: s.ud.Generation})
}

// summarize sets the phase and the kstatus summary; lastError is cleared
// unless the phase is error.
func (s *scope) summarize(p v1alpha1.DeploymentPhase, state conditions.State, reason, msg string) {
	s.status.Phase = p
	s.status.ObservedGeneration = s.ud.Generation
	if p != v1alpha1.PhaseError {
		s.status.LastError = ""
	}
	conditions.SetSummary(&s.status.Conditions, s.ud.Generation, state, reason, msg)
}

// fail sets phase error with reason and msg, and remembers the reason for
// the reconcile's error count.
func (s *scope) fail(state conditions.State, reason, msg string) {
	s.summarize(v1alpha1.PhaseError, state, reason, msg)
	s.status.LastError = msg
	s.failed = reason
}

// onError records err in the status (a wait for deleted objects is only
// logged) and decides how to retry.
func (r *Reconciler) onError(ctx context.Context, s *scope, err error) (ctrl.Result, error) {
	var st *stalledError
	var conflict *ConflictError
	var waiting *waitingError
	switch {
	case errors.As(err, &waiting):
		ctrl.LoggerFrom(ctx).V(1).Info(waiting.Error())
		if waiting.reason != "" {
			phase := s.status.Phase
			if phase == "" || phase == v1alpha1.PhaseError {
				phase = v1alpha1.PhasePending
			}
			s.summarize(phase, conditions.InProgress, waiting.reason, waiting.Error())
		}
		return ctrl.Result{RequeueAfter: retryWaiting}, nil
	case errors.As(err, &st):
		if st.reason == ReasonTemplateNotFound {
			s.setCondition(ConditionTemplateResolved, metav1.ConditionFalse, st.reason, st.msg)
		}
		s.fail(conditions.Stalled, st.reason, st.msg)
		return ctrl.Result{}, reconcile.TerminalError(err)
	case errors.As(err, &conflict):
		s.fail(conditions.Stalled, ReasonChildConflict, err.Error())
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	}
	ref := refusal.Of(err)
	if ref.Terminal {
		// No retry can fix it: stalled until the spec (or a watched child) changes.
		s.fail(conditions.Stalled, ref.Reason, err.Error())
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("reconcile failed", "error", err.Error())
	reason := ReasonReconcileError
	if ref.Reason != "" {
		reason = ref.Reason
	}
	s.fail(conditions.InProgress, reason, err.Error())
	return ctrl.Result{}, err
}

// writeStatus applies the status when it differs from the cached one and
// records phase-change events and metrics.
func (r *Reconciler) writeStatus(ctx context.Context, old *v1alpha1.UserDeployment, s *scope) error {
	if equality.Semantic.DeepEqual(old.Status, s.status) {
		return nil
	}
	// The resourceVersion makes a status computed from a stale cached object
	// fail instead of overwriting newer status (an apply that omits a field
	// this manager set before, such as lastReconcile, would remove it).
	ac := schedacv1alpha1.UserDeployment(s.ud.Name, s.ud.Namespace).WithUID(s.ud.UID).
		WithResourceVersion(s.ud.ResourceVersion).WithStatus(statusApply(&s.status))
	if _, err := r.clientset.SchedulerV1alpha1().UserDeployments(s.ud.Namespace).ApplyStatus(ctx, ac,
		metav1.ApplyOptions{FieldManager: r.owner, Force: true}); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return nil // gone meanwhile (the UID keeps the apply from recreating it)
		case apierrors.IsConflict(err):
			// A newer version exists; its update event reconciles again.
			ctrl.LoggerFrom(ctx).V(1).Info("status not written: the cached object is stale")
			return nil
		}
		return fmt.Errorf("write status: %w", err)
	}
	if old.Status.Phase != s.status.Phase {
		ctrl.LoggerFrom(ctx).Info("phase changed", "from", old.Status.Phase, "to", s.status.Phase, "lastError", s.status.LastError)
		r.phaseChanged(old, s)
	}
	return nil
}

func (r *Reconciler) phaseChanged(old *v1alpha1.UserDeployment, s *scope) {
	eventType, note := corev1.EventTypeNormal, fmt.Sprintf("phase %s", s.status.Phase)
	if c := meta.FindStatusCondition(s.status.Conditions, v1alpha1.ConditionReady); c != nil {
		note = fmt.Sprintf("phase %s: %s", s.status.Phase, c.Message)
	}
	if s.status.Phase == v1alpha1.PhaseError {
		eventType = corev1.EventTypeWarning
	}
	phase := string(s.status.Phase)
	r.recorder.Eventf(s.ud, nil, eventType, "Phase"+strings.ToUpper(phase[:1])+phase[1:], "Reconcile", "%s", note)
	if s.status.Phase == v1alpha1.PhaseReady {
		since := old.CreationTimestamp.Time
		if c := meta.FindStatusCondition(old.Status.Conditions, v1alpha1.ConditionReady); c != nil && c.Status == metav1.ConditionFalse {
			since = c.LastTransitionTime.Time
		}
		timeToReady.Observe(r.now().Sub(since).Seconds())
	}
}

func statusApply(st *v1alpha1.UserDeploymentStatus) *schedacv1alpha1.UserDeploymentStatusApplyConfiguration {
	ac := schedacv1alpha1.UserDeploymentStatus().WithObservedGeneration(st.ObservedGeneration).
		WithNamespace(st.Namespace).WithReadyReplicas(st.ReadyReplicas)
	if st.Phase != "" {
		ac.WithPhase(st.Phase)
	}
	if st.LastError != "" {
		ac.WithLastError(st.LastError)
	}
	if st.LastReconcile != nil {
		ac.WithLastReconcile(*st.LastReconcile)
	}
	ac.WithRetainedClaims(st.RetainedClaims...)
	for _, i := range st.Ingresses {
		ac.WithIngresses(schedacv1alpha1.IngressStatus().WithService(i.Service).WithHost(i.Host).
			WithURL(i.URL).WithVisibility(i.Visibility))
	}
	for _, c := range st.Conditions {
		ac.WithConditions(metav1ac.Condition().WithType(c.Type).WithStatus(c.Status).WithReason(c.Reason).
			WithMessage(c.Message).WithObservedGeneration(c.ObservedGeneration).WithLastTransitionTime(c.LastTransitionTime))
	}
	return ac
}
