package manager

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Phase is one item of a reconcile's ordered checklist over its scope S, in
// the manner of cluster-api's Machine reconciler: every manager's Reconcile
// fetches its object, builds a scope, runs its phases with RunPhases, then
// writes the status the phases computed once, if it changed, and requeues
// as the scope says. A phase returns done to end the checklist early (what
// follows needs what it could not do), or an error to end it and have the
// reconcile retried.
type Phase[S any] func(ctx context.Context, s S) (done bool, err error)

// RunPhases runs phases in order until one is done or fails, and returns
// that phase's error. Phases named with PhaseMetrics.Named time themselves
// and count their errors.
func RunPhases[S any](ctx context.Context, s S, phases ...Phase[S]) error {
	for _, p := range phases {
		done, err := p(ctx, s)
		if err != nil || done {
			return err
		}
	}
	return nil
}

// PhaseMetrics records the phases of one controller's reconciles over scope
// S in opsnorth_reconcile_phase_duration_seconds{controller,phase,result}
// and opsnorth_reconcile_phase_errors_total{controller,phase,type}. Each
// manager declares one per controller and names its phases with Named when
// it builds their list.
type PhaseMetrics[S any] struct {
	controller string
	errs       PhaseErrors
}

// PhaseErrors tells a controller's own error values apart, for ErrorType;
// either may be nil.
type PhaseErrors struct {
	// Refused reports an error that is the controller's refusal of what its
	// object asks (a spec no retry can satisfy, a child another owner
	// holds): type "refused".
	Refused func(error) bool
	// Waiting reports an error value that is no failure: the phase waits
	// for something and ends the checklist, as a done phase does. It is
	// timed as a success and not counted.
	Waiting func(error) bool
}

// NewPhaseMetrics returns the phase metrics of controller, the name it
// has in controller-runtime's metrics.
func NewPhaseMetrics[S any](controller string, errs PhaseErrors) *PhaseMetrics[S] {
	return &PhaseMetrics[S]{controller: controller, errs: errs}
}

// Named returns run as the phase name: each run is timed, by whether it
// returned an error, and an error is counted by its ErrorType. A phase
// that is done is a success. The success series is looked up here, once,
// so a phase that succeeds costs two reads of the monotonic clock and an
// Observe, about 150ns (see BenchmarkRunPhases).
func (m *PhaseMetrics[S]) Named(name string, run Phase[S]) Phase[S] {
	registerPhaseMetrics()
	ok := PhaseDuration.WithLabelValues(m.controller, name, resultSuccess)
	return func(ctx context.Context, s S) (bool, error) {
		start := monotonic()
		done, err := run(ctx, s)
		took := monotonic() - start
		if err == nil || m.errs.Waiting != nil && m.errs.Waiting(err) {
			ok.Observe(took.Seconds())
			return done, err
		}
		m.failed(name, took, err)
		return done, err
	}
}

// failed records a phase that returned err after took.
func (m *PhaseMetrics[S]) failed(name string, took time.Duration, err error) {
	PhaseDuration.WithLabelValues(m.controller, name, resultError).Observe(took.Seconds())
	PhaseErrorsTotal.WithLabelValues(m.controller, name, ErrorType(err, m.errs.Refused)).Inc()
}

// clockBase is the origin of monotonic.
var clockBase = time.Now()

// monotonic reads the monotonic clock only: time.Now reads the wall clock
// too, which doubles the cost of timing a phase.
func monotonic() time.Duration { return time.Since(clockBase) }

// Results of PhaseDuration.
const (
	resultSuccess = "success"
	resultError   = "error"
)

// The reconcile phase metrics of every manager; exported for tests.
var (
	// PhaseDuration is the time each reconcile phase took, by controller,
	// phase and result (success or error).
	PhaseDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "opsnorth_reconcile_phase_duration_seconds",
		Help: "Time a phase of a reconcile took, by controller, phase and result (success: it went on or ended " +
			"the reconcile early; error: it failed).",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"controller", "phase", "result"})
	// PhaseErrorsTotal counts the errors of reconcile phases by
	// controller, phase and ErrorType.
	PhaseErrorsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opsnorth_reconcile_phase_errors_total",
		Help: "Errors that ended a reconcile phase, by controller, phase and type (refused, terminal, conflict, " +
			"already_exists, not_found, forbidden, invalid, timeout, too_many_requests, unavailable, " +
			"kind_not_installed, canceled, other).",
	}, []string{"controller", "phase", "type"})
)

// registerPhaseMetrics adds the phase metrics to controller-runtime's
// registry, once per process.
var registerPhaseMetrics = MetricsRegistrar(PhaseDuration, PhaseErrorsTotal)
