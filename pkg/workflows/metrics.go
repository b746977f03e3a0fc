package workflows

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/manager"
)

// controllerName names the Workflow controller in logs and metrics.
const controllerName = "workflow"

// phaseMetrics times the reconcile's phases and counts their errors. No
// phase returns a refusal as an error: a step's refused task fails the
// step, or is retried through scope.retry, after the phases.
var phaseMetrics = manager.NewPhaseMetrics[*scope](controllerName, manager.PhaseErrors{})

// Metrics beyond controller-runtime's own reconcile counts and latencies
// and the phase metrics; exported for tests.
var (
	StartedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "opsnorth_workflows_started_total",
		Help: "Workflows whose first reconcile started them.",
	})
	CompletedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opsnorth_workflows_completed_total",
		Help: "Workflows that reached a terminal phase, by phase and reason.",
	}, []string{"phase", "reason"})
	Duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "opsnorth_workflow_duration_seconds",
		Help:    "Time from a workflow's start to its terminal phase.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 18), // 1s .. ~36h
	}, []string{"phase"})
	CollectedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opsnorth_workflows_collected_total",
		Help: "Finished Workflows deleted, with their step tasks, at the end of their TTL (ttlSecondsAfterFinished), by namespace.",
	}, []string{"workflow_namespace"})
	HopLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "opsnorth_workflow_step_hop_latency_seconds",
		Help: "Time from a step's AgentTask reaching Succeeded (as first observed by this manager, " +
			"else its completionTime) to the creation of the next step's AgentTask.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	})
)

// registerMetrics adds the metrics to controller-runtime's registry, once per process.
var registerMetrics = manager.MetricsRegistrar(StartedTotal, CompletedTotal, Duration, HopLatency, CollectedTotal, stateGauges)

// hopTracker remembers when this manager first saw each step task succeed,
// which is more precise than the task's completionTime (whole seconds).
type hopTracker struct {
	mu   sync.Mutex
	seen map[types.UID]time.Time
}

func newHopTracker() *hopTracker { return &hopTracker{seen: map[types.UID]time.Time{}} }

// succeeded records that task was seen turning Succeeded at t.
func (h *hopTracker) succeeded(uid types.UID, t time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.seen[uid]; !ok {
		h.seen[uid] = t
	}
}

// forget drops a deleted task.
func (h *hopTracker) forget(uid types.UID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.seen, uid)
}

// observeHop records the hop into step i, started at now: from the latest
// success among its dependencies. Root steps have no hop.
func (h *hopTracker) observeHop(obs *observation, steps []v1alpha1.StepStatus, i int, now time.Time) {
	var from time.Time
	for _, j := range obs.graph.Deps(i) {
		t := obs.tasks[steps[j].TaskName]
		if t == nil {
			return
		}
		h.mu.Lock()
		at, ok := h.seen[t.UID]
		h.mu.Unlock()
		if !ok && t.Status.CompletionTime != nil {
			at = t.Status.CompletionTime.Time
		}
		if at.After(from) {
			from = at
		}
	}
	if !from.IsZero() {
		HopLatency.Observe(now.Sub(from).Seconds())
	}
}
