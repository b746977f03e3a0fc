package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestRunPhases(t *testing.T) {
	boom := errors.New("boom")
	// step returns a phase that records its name and ends as told.
	step := func(name string, done bool, err error) Phase[*[]string] {
		return func(_ context.Context, ran *[]string) (bool, error) {
			*ran = append(*ran, name)
			return done, err
		}
	}
	tests := []struct {
		name    string
		phases  []Phase[*[]string]
		wantRan []string
		wantErr error
	}{
		{name: "all in order", phases: []Phase[*[]string]{step("a", false, nil), step("b", false, nil), step("c", false, nil)},
			wantRan: []string{"a", "b", "c"}},
		{name: "done ends the checklist", phases: []Phase[*[]string]{step("a", false, nil), step("b", true, nil), step("c", false, nil)},
			wantRan: []string{"a", "b"}},
		{name: "an error ends it and is returned", phases: []Phase[*[]string]{step("a", false, boom), step("b", false, nil)},
			wantRan: []string{"a"}, wantErr: boom},
		{name: "none", wantRan: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran []string
			err := RunPhases(t.Context(), &ran, tt.phases...)
			assert.Equal(t, tt.wantRan, ran)
			assert.Equal(t, tt.wantErr, err)
		})
	}
}

// phaseCount is the number of runs of controller's phase with result.
func phaseCount(t *testing.T, controller, phase, result string) uint64 {
	t.Helper()
	m := &dto.Metric{}
	require.NoError(t, PhaseDuration.WithLabelValues(controller, phase, result).(prometheus.Histogram).Write(m))
	return m.GetHistogram().GetSampleCount()
}

// TestPhaseMetrics: a named phase is timed once per run by its result, and
// an error counted by its type; a wait is a success; unnamed phases record
// nothing.
func TestPhaseMetrics(t *testing.T) {
	waitErr, stallErr := errors.New("waiting for children"), errors.New("spec refused")
	m := NewPhaseMetrics[*int]("test-phases", PhaseErrors{
		Refused: func(err error) bool { return errors.Is(err, stallErr) },
		Waiting: func(err error) bool { return errors.Is(err, waitErr) },
	})
	ends := func(done bool, err error) Phase[*int] {
		return func(_ context.Context, n *int) (bool, error) {
			*n++
			time.Sleep(time.Millisecond)
			return done, err
		}
	}
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "jobs"}, "j", errors.New("changed"))
	phases := []Phase[*int]{
		m.Named("ok", ends(false, nil)),
		m.Named("done", ends(true, nil)),
	}
	var n int
	require.NoError(t, RunPhases(t.Context(), &n, phases...))
	require.NoError(t, RunPhases(t.Context(), &n, phases...))
	failing := m.Named("fails", ends(false, fmt.Errorf("apply: %w", conflict)))
	require.ErrorIs(t, RunPhases(t.Context(), &n, phases[0], failing, phases[1]), conflict)
	require.ErrorIs(t, RunPhases(t.Context(), &n, m.Named("fails", ends(true, stallErr))), stallErr)
	require.ErrorIs(t, RunPhases(t.Context(), &n, m.Named("waits", ends(true, waitErr))), waitErr)
	require.NoError(t, RunPhases(t.Context(), &n, ends(false, nil)))
	assert.Equal(t, 9, n)

	for _, c := range []struct {
		phase, result string
		want          uint64
	}{
		{"ok", resultSuccess, 3}, {"ok", resultError, 0},
		{"done", resultSuccess, 2},
		{"fails", resultSuccess, 0}, {"fails", resultError, 2},
		{"waits", resultSuccess, 1}, {"waits", resultError, 0},
	} {
		assert.Equal(t, c.want, phaseCount(t, "test-phases", c.phase, c.result), "%s %s", c.phase, c.result)
	}
	errs := func(phase, typ string) float64 {
		return testutil.ToFloat64(PhaseErrorsTotal.WithLabelValues("test-phases", phase, typ))
	}
	assert.Equal(t, 1.0, errs("fails", ErrorConflict))
	assert.Equal(t, 1.0, errs("fails", ErrorRefused))
	assert.Zero(t, errs("waits", ErrorOther))

	d := &dto.Metric{}
	require.NoError(t, PhaseDuration.WithLabelValues("test-phases", "ok", resultSuccess).(prometheus.Histogram).Write(d))
	assert.GreaterOrEqual(t, d.GetHistogram().GetSampleSum(), 3*time.Millisecond.Seconds(), "each run is timed")
}

func TestErrorType(t *testing.T) {
	gr := schema.GroupResource{Group: "batch", Resource: "jobs"}
	refused := errors.New("refused")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"the controller's refusal", fmt.Errorf("check: %w", refused), ErrorRefused},
		{"terminal", reconcile.TerminalError(apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "j", nil)), ErrorTerminal},
		{"conflict", fmt.Errorf("apply: %w", apierrors.NewConflict(gr, "j", errors.New("x"))), ErrorConflict},
		{"already exists", apierrors.NewAlreadyExists(gr, "j"), ErrorAlreadyExists},
		{"not found", apierrors.NewNotFound(gr, "j"), ErrorNotFound},
		{"forbidden", apierrors.NewForbidden(gr, "j", errors.New("rbac")), ErrorForbidden},
		{"unauthorized", apierrors.NewUnauthorized("token expired"), ErrorForbidden},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "j", nil), ErrorInvalid},
		{"bad request", apierrors.NewBadRequest("no"), ErrorInvalid},
		{"too large", apierrors.NewRequestEntityTooLargeError("big"), ErrorInvalid},
		{"timeout", apierrors.NewTimeoutError("slow", 1), ErrorTimeout},
		{"server timeout", apierrors.NewServerTimeout(gr, "create", 1), ErrorTimeout},
		{"gateway timeout", apierrors.NewGenericServerResponse(http.StatusGatewayTimeout, "get", gr, "j", "", 0, false), ErrorTimeout},
		{"deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), ErrorTimeout},
		{"throttled", apierrors.NewTooManyRequests("slow down", 1), ErrorTooManyRequests},
		{"internal", apierrors.NewInternalError(errors.New("etcd")), ErrorUnavailable},
		{"unavailable", apierrors.NewServiceUnavailable("down"), ErrorUnavailable},
		{"no kind", &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "traefik.io", Kind: "IngressRoute"}}, ErrorKindNotInstalled},
		{"canceled", fmt.Errorf("list: %w", context.Canceled), ErrorCanceled},
		{"method not allowed", apierrors.NewMethodNotSupported(gr, "patch"), ErrorOther},
		{"network", errors.New("dial tcp: connection refused"), ErrorOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ErrorType(tt.err, func(err error) bool { return errors.Is(err, refused) }))
		})
	}
	assert.Equal(t, ErrorOther, ErrorType(refused, nil), "no refusals without a classifier")
}

// BenchmarkRunPhases compares a checklist of three succeeding phases bare
// and named (once, as the tasks and workflows managers do, or on every
// reconcile, as the deployments manager does): the cost of the phase
// metrics on the happy path.
func BenchmarkRunPhases(b *testing.B) {
	run := func(_ context.Context, n *int) (bool, error) { *n++; return false, nil }
	m := NewPhaseMetrics[*int]("bench-phases", PhaseErrors{})
	named := func() []Phase[*int] { return []Phase[*int]{m.Named("a", run), m.Named("b", run), m.Named("c", run)} }
	for _, c := range []struct {
		name   string
		phases []Phase[*int]
	}{
		{"bare", []Phase[*int]{run, run, run}},
		{"named", named()},
		{"named-per-run", nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				phases := c.phases
				if phases == nil {
					phases = named()
				}
				_ = RunPhases(b.Context(), &n, phases...)
			}
		})
	}
}
