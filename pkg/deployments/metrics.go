package deployments

import (
	"context"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/manager"
)

// Metrics beyond controller-runtime's per-controller reconcile counts and latencies.
var (
	reconcileErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opsnorth_userdeployment_reconcile_errors_total",
		Help: "UserDeployment reconciles that ended in phase error, by reason.",
	}, []string{"reason"})
	timeToReady = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "opsnorth_userdeployment_time_to_ready_seconds",
		Help:    "Seconds from a UserDeployment becoming not ready (created or changed) to phase ready.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	})
	phaseDesc = prometheus.NewDesc("opsnorth_userdeployments",
		"UserDeployments by phase, from the elected leader's cache.", []string{"phase"}, nil)

	// phases is the process's one phase gauge.
	phases = &phaseCollector{}
)

// reportedPhases are the phases the gauge reports, each even when zero.
var reportedPhases = []v1alpha1.DeploymentPhase{v1alpha1.PhasePending, v1alpha1.PhaseProvisioning,
	v1alpha1.PhaseReady, v1alpha1.PhaseStopped, v1alpha1.PhaseError, v1alpha1.PhaseDeleting, v1alpha1.PhaseDeleted}

// phaseCollector counts UserDeployments by phase at scrape time, so the
// gauge can never drift from the objects. It reads the cache of the
// reconciler whose manager leads and reports nothing while none does: every
// replica caches every UserDeployment, so a standby reporting too would
// double the leader's numbers.
type phaseCollector struct {
	leader atomic.Pointer[Reconciler]
}

func (c *phaseCollector) Describe(ch chan<- *prometheus.Desc) { ch <- phaseDesc }

func (c *phaseCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.leader.Load()
	if r == nil {
		return
	}
	counts := map[v1alpha1.DeploymentPhase]int{}
	for _, inf := range r.udInformers {
		for _, obj := range inf.GetStore().List() {
			if ud, ok := obj.(*v1alpha1.UserDeployment); ok {
				counts[ud.Status.Phase]++
			}
		}
	}
	for _, p := range reportedPhases {
		ch <- prometheus.MustNewConstMetric(phaseDesc, prometheus.GaugeValue, float64(counts[p]), string(p))
	}
}

// phaseReporter is a runnable that needs leader election: the manager starts
// it once this replica is elected (at once when leader election is off), and
// from then until the manager stops the phase gauge reads r's cache.
type phaseReporter struct {
	gauge *phaseCollector
	r     *Reconciler
}

// NeedLeaderElection reports true: only the leader reports phases.
func (p phaseReporter) NeedLeaderElection() bool { return true }

// Start makes the gauge read r's cache until ctx ends; another manager
// elected since (tests run several in one process) keeps the gauge.
func (p phaseReporter) Start(ctx context.Context) error {
	p.gauge.leader.Store(p.r)
	<-ctx.Done()
	p.gauge.leader.CompareAndSwap(p.r, nil)
	return nil
}

// registerMetrics adds the metrics to controller-runtime's registry, once per process.
var registerMetrics = manager.MetricsRegistrar(reconcileErrors, timeToReady, phases)
