package tasks

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	listers "opsnorth.io/scheduler/generated/listers/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/manager"
)

var activeDesc = prometheus.NewDesc("opsnorth_agenttasks_active",
	"AgentTasks not yet in a terminal phase, by namespace and phase (Pending, Running), from the elected leader's cache.",
	[]string{"task_namespace", "phase"}, nil)

// activeGauges is the process's one gauge of active tasks.
var activeGauges = manager.NewLeaderGauges(activeDesc)

// activeKey is one series of the active tasks gauge.
type activeKey struct {
	namespace string
	phase     string
}

// countActive counts the tasks not in a terminal phase by namespace and
// phase; a new task without a phase counts as Pending.
func countActive(tasks []*v1alpha1.AgentTask) map[activeKey]int {
	counts := map[activeKey]int{}
	for _, t := range tasks {
		if t.Status.Phase.IsTerminal() {
			continue
		}
		phase := t.Status.Phase
		if phase == "" {
			phase = v1alpha1.TaskPending
		}
		counts[activeKey{t.Namespace, string(phase)}]++
	}
	return counts
}

// collectActive reports the active tasks of the listers' caches.
func collectActive(from []listers.AgentTaskLister) func(chan<- prometheus.Metric) {
	return func(ch chan<- prometheus.Metric) {
		var all []*v1alpha1.AgentTask
		for _, l := range from {
			tasks, _ := l.List(labels.Everything()) // a cache lister never fails
			all = append(all, tasks...)
		}
		for k, n := range countActive(all) {
			ch <- prometheus.MustNewConstMetric(activeDesc, prometheus.GaugeValue, float64(n), k.namespace, k.phase)
		}
	}
}
