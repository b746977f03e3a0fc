package workflows

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/informers/externalversions"
	"opsnorth.io/scheduler/pkg/manager"
)

// The state gauges, from the elected leader's cache, by the workflow's namespace.
var (
	runningDesc = prometheus.NewDesc("opsnorth_workflows_running",
		"Workflows started and not yet finished (Running or Suspended), by namespace.",
		[]string{"workflow_namespace"}, nil)
	approvalsDesc = prometheus.NewDesc("opsnorth_workflow_approvals_waiting",
		"Approval steps waiting for a decision, by namespace.", []string{"workflow_namespace"}, nil)
	oldestApprovalDesc = prometheus.NewDesc("opsnorth_workflow_approval_oldest_wait_seconds",
		"How long the oldest approval step waiting for a decision has waited, by namespace (only where one waits).",
		[]string{"workflow_namespace"}, nil)

	// stateGauges is the process's one set of state gauges.
	stateGauges = manager.NewLeaderGauges(runningDesc, approvalsDesc, oldestApprovalDesc)
)

// namespaceState is what the gauges report of one namespace.
type namespaceState struct {
	running, approvals int
	// oldest is the longest wait of an approval step; zero when none waits.
	oldest time.Duration
}

// workflowStates sums the workflows' state by namespace at now.
func workflowStates(wfs []*v1alpha1.Workflow, now time.Time) map[string]namespaceState {
	out := map[string]namespaceState{}
	for _, wf := range wfs {
		if wf.Status.StartTime == nil || wf.Status.Phase.IsTerminal() {
			continue
		}
		st := out[wf.Namespace]
		st.running++
		for _, step := range wf.Status.StepStatuses {
			if step.Phase != v1alpha1.StepWaiting {
				continue
			}
			st.approvals++
			if step.StartTime != nil {
				st.oldest = max(st.oldest, now.Sub(step.StartTime.Time))
			}
		}
		out[wf.Namespace] = st
	}
	return out
}

// collectStates reports the state of the workflows the factories cache.
func collectStates(factories []externalversions.SharedInformerFactory, now func() time.Time) func(chan<- prometheus.Metric) {
	return func(ch chan<- prometheus.Metric) {
		var all []*v1alpha1.Workflow
		for _, f := range factories {
			wfs, _ := f.Scheduler().V1alpha1().Workflows().Lister().List(labels.Everything()) // a cache lister never fails
			all = append(all, wfs...)
		}
		for ns, st := range workflowStates(all, now()) {
			ch <- prometheus.MustNewConstMetric(runningDesc, prometheus.GaugeValue, float64(st.running), ns)
			ch <- prometheus.MustNewConstMetric(approvalsDesc, prometheus.GaugeValue, float64(st.approvals), ns)
			if st.approvals > 0 {
				ch <- prometheus.MustNewConstMetric(oldestApprovalDesc, prometheus.GaugeValue, st.oldest.Seconds(), ns)
			}
		}
	}
}
