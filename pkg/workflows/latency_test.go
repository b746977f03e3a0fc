package workflows_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/informers/externalversions"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testkit"
	"opsnorth.io/scheduler/pkg/workflows"
)

const hopHistogram = "opsnorth_workflow_step_hop_latency_seconds"

// autopilot plays a tasks manager whose agents finish at once: every
// AgentTask that appears is set Succeeded with an output. It records when
// each task was first seen and when its Succeeded status was stored.
type autopilot struct {
	mu       sync.Mutex
	seen     map[string]time.Time
	finished map[string]time.Time
	// rtt are the durations of the UpdateStatus calls: the API server's
	// write latency under the test's load, the floor of any hop.
	rtt []time.Duration
}

func runAutopilot(t *testing.T, k *cluster) *autopilot {
	a := &autopilot{seen: map[string]time.Time{}, finished: map[string]time.Time{}}
	factory := externalversions.NewSharedInformerFactoryWithOptions(k.cs, 0, externalversions.WithNamespace(k.ns))
	inf := factory.Scheduler().V1alpha1().AgentTasks().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		task := obj.(*v1alpha1.AgentTask).DeepCopy()
		a.mu.Lock()
		a.seen[task.Name] = time.Now()
		a.mu.Unlock()
		go func() {
			start := time.Now()
			now := metav1.Now()
			task.Status = v1alpha1.AgentTaskStatus{
				Phase: v1alpha1.TaskSucceeded, StartTime: &now, CompletionTime: &now,
				Output: map[string]string{"n": task.Labels[labelkeys.Step]},
			}
			_, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).UpdateStatus(context.Background(), task, metav1.UpdateOptions{})
			if err != nil {
				t.Errorf("finish %s: %v", task.Name, err)
				return
			}
			a.mu.Lock()
			a.finished[task.Name] = time.Now()
			a.rtt = append(a.rtt, time.Since(start))
			a.mu.Unlock()
		}()
	}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return a
}

// TestHopLatency runs 5 workflows of 50 sequential steps side by side (245
// hops) and reports the step hop latency: from the moment the previous
// step's Succeeded status was stored to the moment the next step's task is
// seen (the test's end-to-end view, through two watches), and the manager's
// own histogram (Succeeded observed → next task created).
func TestHopLatency(t *testing.T) {
	const workflowsN, stepsN = 5, 50
	k := newCluster(t)
	a := runAutopilot(t, k)
	// The manager registers its metrics when it sets up; no workflow exists
	// yet, so nothing was observed.
	startManager(t, k.ns)
	registered, err := testutil.GatherAndCount(metrics.Registry, hopHistogram)
	require.NoError(t, err)
	require.Equal(t, 1, registered, "the histogram is registered on setup")
	before := histogram(t)
	patchesBefore := patches(t)
	for w := range workflowsN {
		steps := make([]v1alpha1.WorkflowStep, stepsN)
		for i := range steps {
			steps[i] = step(fmt.Sprintf("s%02d", i), nil)
			if i > 0 {
				steps[i].Input = map[string]string{"PREV": fmt.Sprintf("${steps.%d.output.n}", i-1)}
			}
		}
		k.create(stepWorkflow(fmt.Sprintf("hops-%d", w), steps...))
	}
	for w := range workflowsN {
		done := k.waitWorkflow(fmt.Sprintf("hops-%d", w), v1alpha1.WorkflowSucceeded)
		require.Len(t, done.Status.StepStatuses, stepsN)
		assert.Equal(t, map[string]string{"n": "s49"}, done.Status.StepStatuses[stepsN-1].Output)
	}
	// The autopilot notes a finish once its UpdateStatus call returned; the
	// manager may have seen that status, and gone on, before.
	require.Eventually(t, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.finished) == workflowsN*stepsN
	}, wait, 20*time.Millisecond, "the autopilot noted every finish")

	var hops []time.Duration
	a.mu.Lock()
	for w := range workflowsN {
		wf := fmt.Sprintf("hops-%d", w)
		for i := 1; i < stepsN; i++ {
			prev := names(wf, fmt.Sprintf("s%02d 0", i-1))[0]
			next := names(wf, fmt.Sprintf("s%02d 0", i))[0]
			hops = append(hops, a.seen[next].Sub(a.finished[prev]))
		}
	}
	rtt := slices.Clone(a.rtt)
	a.mu.Unlock()
	slices.Sort(rtt)
	t.Logf("API write latency (the test's UpdateStatus calls), %d writes: p50=%s p99=%s", len(rtt), rtt[len(rtt)/2], rtt[len(rtt)*99/100])
	require.Len(t, hops, workflowsN*(stepsN-1))
	slices.Sort(hops)
	p50, p99 := hops[len(hops)/2], hops[len(hops)*99/100]
	t.Logf("step hop latency, end to end (status stored -> next task seen), %d hops: p50=%s p99=%s max=%s",
		len(hops), p50, p99, hops[len(hops)-1])

	after := histogram(t)
	count := after.count - before.count
	require.Equal(t, uint64(len(hops)), count, "the manager records one hop per started step with dependencies")
	t.Logf("step hop latency, manager histogram (%s), %d hops: p50<=%gs p99<=%gs",
		hopHistogram, count, after.quantile(before, 0.50), after.quantile(before, 0.99))
	t.Logf("status writes (server-side apply PATCHes) for %d steps: %g", workflowsN*stepsN, patches(t)-patchesBefore)
	assert.Less(t, p50, time.Second, "a hop takes milliseconds, not a resync period")
	assert.Less(t, p99, 5*time.Second)
}

// hist is a snapshot of the hop histogram's cumulative buckets.
type hist struct {
	count  uint64
	bounds []float64
	cum    []uint64
}

func histogram(t *testing.T) hist {
	h := testkit.Histogram(t, workflows.HopLatency)
	out := hist{count: h.GetSampleCount()}
	for _, b := range h.GetBucket() {
		out.bounds = append(out.bounds, b.GetUpperBound())
		out.cum = append(out.cum, b.GetCumulativeCount())
	}
	return out
}

// quantile returns the upper bound of the bucket holding quantile q of the
// samples observed between before and h.
func (h hist) quantile(before hist, q float64) float64 {
	total := h.count - before.count
	for i, c := range h.cum {
		if float64(c-before.cum[i]) >= q*float64(total) {
			return h.bounds[i]
		}
	}
	return h.bounds[len(h.bounds)-1]
}

// patches counts the process's client PATCH requests, from client-go's
// metrics (the test's own writes are PUTs and POSTs, never PATCHes).
func patches(t *testing.T) float64 {
	return testkit.ByLabel(t, "rest_client_requests_total", "method")["PATCH"]
}
