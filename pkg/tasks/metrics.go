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

// The tasks manager's metrics, each by the task's namespace (the first
// label, task_namespace: one named namespace would collide with the scrape
// target's and become exported_namespace through a ServiceMonitor).
// Reconcile counts, errors and latency per controller are
// controller-runtime's own (controller_runtime_reconcile_*), and the time and
// errors of each reconcile phase manager.PhaseMetrics' (phaseMetrics).
var (
	// StartupDuration is the time from a task's Job creation to its agent running.
	StartupDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "opsnorth_agenttask_startup_duration_seconds",
		Help:    "Time from the creation of an AgentTask's Job to its agent container running (Pending to Running), by namespace.",
		Buckets: []float64{0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600},
	}, []string{"task_namespace"})
	// CreatedTotal counts the Jobs created for tasks.
	CreatedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opsnorth_agenttasks_created_total",
		Help: "AgentTasks whose Job this manager created, by namespace.",
	}, []string{"task_namespace"})
	// CompletedTotal counts tasks reaching a terminal phase, by that phase.
	CompletedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opsnorth_agenttasks_completed_total",
		Help: "AgentTasks that reached a terminal phase, by namespace and phase (Succeeded, Failed, Timeout).",
	}, []string{"task_namespace", "phase"})
	// PhaseTransitionsTotal counts recorded phase changes.
	PhaseTransitionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opsnorth_agenttask_phase_transitions_total",
		Help: "AgentTask phase changes recorded in status, by namespace, previous phase (None for a new task) and new phase.",
	}, []string{"task_namespace", "from", "to"})
	// JobCreationDuration is the time from a task's creation to its Job's.
	JobCreationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "opsnorth_agenttask_job_creation_duration_seconds",
		Help:    "Time from an AgentTask's creation to the successful creation of its Job, by namespace.",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60},
	}, []string{"task_namespace"})
	// PodCreationDuration is the time from a task's Job creation to its
	// pod's, observed once per task, when the task records its pod.
	PodCreationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "opsnorth_agenttask_pod_creation_duration_seconds",
		Help: "Time from the creation of an AgentTask's Job to the creation of the pod the task records " +
			"(the Job controller's latency), once per task, by namespace.",
		Buckets: []float64{0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300},
	}, []string{"task_namespace"})
	// CollectedTotal counts settled tasks deleted at the end of their TTL.
	CollectedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opsnorth_agenttasks_collected_total",
		Help: "Settled AgentTasks deleted at the end of their TTL (ttlSecondsAfterSettled), by namespace.",
	}, []string{"task_namespace"})
	// ErrorsTotal counts failures by the step that failed.
	ErrorsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opsnorth_agenttask_errors_total",
		Help: "Errors of the AgentTask controller by namespace and type: job_create, job_conflict, api_read, status_write, job_delete.",
	}, []string{"task_namespace", "type"})
)

// phaseMetrics times the reconcile's phases and counts their errors. No
// phase returns a refusal as an error: a refused Job fails the task, or is
// retried through scope.retry, after the phases.
var phaseMetrics = manager.NewPhaseMetrics[*scope](ControllerName, manager.PhaseErrors{})

// registerMetrics adds the metrics to controller-runtime's registry, once per process.
var registerMetrics = manager.MetricsRegistrar(StartupDuration, CreatedTotal, CompletedTotal,
	PhaseTransitionsTotal, JobCreationDuration, PodCreationDuration, CollectedTotal, ErrorsTotal, activeGauges)

// phaseLabel is a phase's metric label; the empty phase of a new task is "None".
func phaseLabel(p v1alpha1.TaskPhase) string {
	if p == "" {
		return "None"
	}
	return string(p)
}
