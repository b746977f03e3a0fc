package tasks

import (
	"github.com/prometheus/client_golang/prometheus"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/manager"
)

// Error types of ErrorsTotal.
const (
	errJobCreate   = "job_create"
	errJobConflict = "job_conflict"
	errAPIRead     = "api_read"
	errStatusWrite = "status_write"
	errJobDelete   = "job_delete"
)

// The tasks manager's metrics. Reconcile counts, errors and latency per
// controller are controller-runtime's own (controller_runtime_reconcile_*)
// and are not repeated here.
var (
	// StartupDuration is the time from a task's Job creation to its agent running.
	StartupDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "opsnorth_agenttask_startup_duration_seconds",
		Help:    "Time from the creation of an AgentTask's Job to its agent container running (Pending to Running).",
		Buckets: []float64{0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600},
	})
	// CreatedTotal counts the Jobs created for tasks.
	CreatedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "opsnorth_agenttasks_created_total",
		Help: "AgentTasks whose Job this manager created.",
	})
	// CompletedTotal counts tasks reaching a terminal phase, by that phase.
	CompletedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opsnorth_agenttasks_completed_total",
		Help: "AgentTasks that reached a terminal phase, by phase (Succeeded, Failed, Timeout).",
	}, []string{"phase"})
	// PhaseTransitionsTotal counts recorded phase changes.
	PhaseTransitionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opsnorth_agenttask_phase_transitions_total",
		Help: "AgentTask phase changes recorded in status, by previous phase (None for a new task) and new phase.",
	}, []string{"from", "to"})
	// JobCreationDuration is the time from a task's creation to its Job's.
	JobCreationDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "opsnorth_agenttask_job_creation_duration_seconds",
		Help:    "Time from an AgentTask's creation to the successful creation of its Job.",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60},
	})
	// ErrorsTotal counts failures by the step that failed.
	ErrorsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opsnorth_agenttask_errors_total",
		Help: "Errors of the AgentTask controller by type: job_create, job_conflict, api_read, status_write.",
	}, []string{"type"})
)

// registerMetrics adds the metrics to controller-runtime's registry, once per process.
var registerMetrics = manager.MetricsRegistrar(StartupDuration, CreatedTotal, CompletedTotal,
	PhaseTransitionsTotal, JobCreationDuration, ErrorsTotal)

// phaseLabel is a phase's metric label; the empty phase of a new task is "None".
func phaseLabel(p v1alpha1.TaskPhase) string {
	if p == "" {
		return "None"
	}
	return string(p)
}
