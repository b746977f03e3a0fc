package deployments

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
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
		"UserDeployments by phase, from the manager's cache.", []string{"phase"}, nil)

	registerOnce sync.Once
	current      atomic.Pointer[Reconciler]
)

// phaseCollector counts UserDeployments by phase at scrape time, so the
// gauge can never drift from the objects.
type phaseCollector struct{}

func (phaseCollector) Describe(ch chan<- *prometheus.Desc) { ch <- phaseDesc }

func (phaseCollector) Collect(ch chan<- prometheus.Metric) {
	r := current.Load()
	if r == nil {
		return
	}
	counts := map[v1alpha1.DeploymentPhase]int{}
	for _, f := range r.informers.Factories() {
		uds, err := f.Scheduler().V1alpha1().UserDeployments().Lister().List(labels.Everything())
		if err != nil {
			continue
		}
		for _, ud := range uds {
			counts[ud.Status.Phase]++
		}
	}
	for _, p := range []v1alpha1.DeploymentPhase{v1alpha1.PhasePending, v1alpha1.PhaseProvisioning, v1alpha1.PhaseReady,
		v1alpha1.PhaseStopped, v1alpha1.PhaseError, v1alpha1.PhaseDeleting, v1alpha1.PhaseDeleted} {
		ch <- prometheus.MustNewConstMetric(phaseDesc, prometheus.GaugeValue, float64(counts[p]), string(p))
	}
}

// registerMetrics registers the metrics once per process; the phase gauge
// reads the most recently set-up reconciler's cache.
func registerMetrics(r *Reconciler) {
	current.Store(r)
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(reconcileErrors, timeToReady, phaseCollector{})
	})
}
