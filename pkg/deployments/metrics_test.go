package deployments

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/refusal"
)

func TestPhaseGaugeReportsOnlyWhileLeading(t *testing.T) {
	mk := func(name string, p v1alpha1.DeploymentPhase) *v1alpha1.UserDeployment {
		return &v1alpha1.UserDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: name},
			Status: v1alpha1.UserDeploymentStatus{Phase: p}}
	}
	r := indexedReconciler(t, mk("one", v1alpha1.PhaseReady), mk("two", v1alpha1.PhaseReady),
		mk("three", v1alpha1.PhaseError), mk("four", v1alpha1.PhaseProvisioning), mk("new", ""))
	gauge := &phaseCollector{}
	reporter := phaseReporter{gauge: gauge, r: r}
	assert.True(t, reporter.NeedLeaderElection(), "the manager starts the reporter only once elected")
	assert.Equal(t, 0, testutil.CollectAndCount(gauge, "opsnorth_userdeployments"), "not elected: no series")

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- reporter.Start(ctx) }()
	require.Eventually(t, func() bool { return testutil.CollectAndCount(gauge) > 0 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, 7, testutil.CollectAndCount(gauge, "opsnorth_userdeployments"))
	require.NoError(t, testutil.CollectAndCompare(gauge, strings.NewReader(phaseSeries(map[v1alpha1.DeploymentPhase]int{
		v1alpha1.PhaseReady: 2, v1alpha1.PhaseError: 1, v1alpha1.PhaseProvisioning: 1})), "opsnorth_userdeployments"))

	// A manager elected since keeps the gauge when an older one stops.
	newer := phaseReporter{gauge: gauge, r: indexedReconciler(t, mk("one", v1alpha1.PhaseStopped))}
	newerCtx, stopNewer := context.WithCancel(t.Context())
	newerDone := make(chan error, 1)
	go func() { newerDone <- newer.Start(newerCtx) }()
	require.Eventually(t, func() bool { return gauge.leader.Load() == newer.r }, 5*time.Second, 10*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	require.NoError(t, testutil.CollectAndCompare(gauge, strings.NewReader(phaseSeries(map[v1alpha1.DeploymentPhase]int{
		v1alpha1.PhaseStopped: 1})), "opsnorth_userdeployments"))

	stopNewer()
	require.NoError(t, <-newerDone)
	assert.Equal(t, 0, testutil.CollectAndCount(gauge, "opsnorth_userdeployments"), "stopped: no series")
}

// phaseSeries is the exposition of the phase gauge with counts, every
// other phase at zero.
func phaseSeries(counts map[v1alpha1.DeploymentPhase]int) string {
	var b strings.Builder
	b.WriteString("# HELP opsnorth_userdeployments UserDeployments by phase, from the elected leader's cache.\n")
	b.WriteString("# TYPE opsnorth_userdeployments gauge\n")
	for _, p := range reportedPhases {
		fmt.Fprintf(&b, "opsnorth_userdeployments{phase=%q} %d\n", p, counts[p])
	}
	return b.String()
}

func TestRunPhasesCountsAReconcileEndingInError(t *testing.T) {
	count := func(reason string) float64 { return testutil.ToFloat64(reconcileErrors.WithLabelValues(reason)) }
	ud := &v1alpha1.UserDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "app", Generation: 1}}
	run := func(phases ...manager.Phase[*scope]) *scope {
		t.Helper()
		s := &scope{ud: ud.DeepCopy()}
		_, _ = (&Reconciler{}).runPhases(t.Context(), s, phases)
		return s
	}
	ok := func(context.Context, *scope) (bool, error) { return false, nil }
	tests := []struct {
		name   string
		phase  manager.Phase[*scope]
		reason string
	}{
		{name: "stalled input", reason: ReasonUnknownTier, phase: func(context.Context, *scope) (bool, error) {
			return true, stalled(ReasonUnknownTier, "unknown tier")
		}},
		{name: "child conflict", reason: ReasonChildConflict, phase: func(context.Context, *scope) (bool, error) {
			return true, &ConflictError{Kind: "Service", Name: "n/app", Owner: "b.other"}
		}},
		{name: "API error", reason: ReasonReconcileError, phase: func(context.Context, *scope) (bool, error) {
			return true, errors.New("apiserver down")
		}},
		{name: "API refusal no retry fixes", reason: refusal.ReasonInvalid, phase: func(context.Context, *scope) (bool, error) {
			return true, fmt.Errorf("apply Deployment: %w", apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", nil))
		}},
		{name: "API refusal that heals", reason: refusal.ReasonQuotaExceeded, phase: func(context.Context, *scope) (bool, error) {
			return true, apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "web", errors.New("exceeded quota: q, requested: services=1"))
		}},
		{name: "phase that fails the deployment itself", reason: ReasonHostConflict, phase: func(_ context.Context, s *scope) (bool, error) {
			s.fail(conditions.Stalled, ReasonHostConflict, "host already in use")
			return true, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := count(tt.reason)
			s := run(ok, tt.phase, ok)
			assert.Equal(t, v1alpha1.PhaseError, s.status.Phase)
			assert.Equal(t, before+1, count(tt.reason), "counted once, when the reconcile ends")
		})
	}

	t.Run("waiting and success are not errors", func(t *testing.T) {
		before := totalErrors(t)
		waiting := func(context.Context, *scope) (bool, error) { return true, &waitingError{what: "children"} }
		run(ok, waiting)
		run(ok, ok)
		assert.Equal(t, before, totalErrors(t))
	})

	t.Run("a wait with a reason says so in the status", func(t *testing.T) {
		deleting := func(_ context.Context, s *scope) (bool, error) {
			s.summarize(v1alpha1.PhaseDeleting, conditions.InProgress, ReasonDeleting, "removing every child")
			return false, nil
		}
		waiting := func(context.Context, *scope) (bool, error) {
			return true, &waitingError{what: "the counts of namespace user-bob to settle", reason: ReasonTakingInventory}
		}
		s := run(deleting, waiting)
		assert.Equal(t, v1alpha1.PhaseDeleting, s.status.Phase)
		c := meta.FindStatusCondition(s.status.Conditions, v1alpha1.ConditionReady)
		require.NotNil(t, c)
		assert.Equal(t, ReasonTakingInventory, c.Reason)
		assert.Equal(t, "waiting for the counts of namespace user-bob to settle", c.Message)
	})
}

// totalErrors sums opsnorth_userdeployment_reconcile_errors_total over reasons.
func totalErrors(t *testing.T) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 64)
	reconcileErrors.Collect(ch)
	close(ch)
	total := 0.0
	for m := range ch {
		var d dto.Metric
		require.NoError(t, m.Write(&d))
		total += d.GetCounter().GetValue()
	}
	return total
}
