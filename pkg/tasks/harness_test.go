package tasks_test

import (
	"context"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/generated/informers/externalversions"
	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/tasks"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/webhook"
)

func TestMain(m *testing.M) { testenv.RunMain(m) }

const fieldOwner = "opsnorth-scheduler-tasks"

// wait is the Eventually timeout: the machine is shared and loaded.
const wait = 60 * time.Second

// settle is how long a test keeps watching for something that must not
// happen (a write, an event, a Job) after the manager had its chance to do
// it: a reconcile or an asynchronous event write may trail that long on the
// loaded machine.
const settle = 5 * time.Second

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// writeCounter is an http.RoundTripper wrapper counting the requests that
// change something (anything but GET: LIST and WATCH are GETs too).
type writeCounter struct {
	writes atomic.Int64
}

func (c *writeCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet {
			c.writes.Add(1)
		}
		return rt.RoundTrip(req)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// startManager runs the tasks controller, built by the same tasks.Setup the
// binary calls, in a manager watching namespace, until the returned stop is
// called (or the test ends). The manager is assembled as pkg/manager.Run does
// it; leader election, metrics and probe servers are off. counter, when not
// nil, sees every request of the manager.
func startManager(t *testing.T, namespace string, cfg tasks.Config, counter *writeCounter) (stop func()) {
	t.Helper()
	var wrap func(http.RoundTripper) http.RoundTripper
	if counter != nil {
		wrap = counter.wrap
	}
	return startManagerWith(t, namespace, cfg, testenv.Require(t).Config, wrap)
}

// startManagerWith is startManager with the manager's identity (base) and
// any wrapper of its transport.
func startManagerWith(t *testing.T, namespace string, cfg tasks.Config, base *rest.Config, wrap func(http.RoundTripper) http.RoundTripper) (stop func()) {
	t.Helper()
	restCfg := rest.CopyConfig(base)
	if wrap != nil {
		restCfg.Wrap(wrap)
	}
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme: scheme,
		Cache: cache.Options{
			DefaultTransform:  cache.TransformStripManagedFields(),
			DefaultNamespaces: map[string]cache.Config{namespace: {}},
			ByObject:          tasks.CacheByObject(),
		},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
		// Several managers run in this one test process, one after another
		// or side by side; the controller name repeats.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	require.NoError(t, err)
	cs, err := versioned.NewForConfig(restCfg)
	require.NoError(t, err)
	factory := externalversions.NewSharedInformerFactoryWithOptions(cs, 0, externalversions.WithNamespace(namespace))
	require.NoError(t, manager.AddInformerFactory(mgr, "scheduler-0", factory))
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, tasks.Setup(ctx, tasks.Deps{
		Manager: mgr, Clientset: cs, Factories: map[string]externalversions.SharedInformerFactory{namespace: factory},
		FieldOwner: fieldOwner, MaxConcurrentReconciles: 4,
	}, cfg))
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		require.NoError(t, <-done)
	}
	t.Cleanup(stop)
	return stop
}

// testConfig is the default configuration with fast webhook retries and the
// loopback receivers of the tests allowed.
func testConfig(t *testing.T, allowLoopback bool) tasks.Config {
	cfg := tasks.DefaultConfig()
	cfg.Webhook.Policy = webhook.Policy{BaseDelay: 300 * time.Millisecond, MaxDelay: time.Second, MaxAttempts: 8}
	cfg.Webhook.Timeout = 3 * time.Second
	if allowLoopback {
		cfg.Webhook.Guard.Allowed = mustCIDRs(t, "127.0.0.0/8")
	}
	return cfg
}

// cluster is the test's view of the API server, as admin and uncounted.
type cluster struct {
	t  *testing.T
	c  client.Client
	cs versioned.Interface
	ns string
}

func newCluster(t *testing.T, namespace string) *cluster {
	t.Helper()
	env := testenv.Require(t)
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	require.NoError(t, err)
	cs, err := versioned.NewForConfig(env.Config)
	require.NoError(t, err)
	require.NoError(t, c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}))
	return &cluster{t: t, c: c, cs: cs, ns: namespace}
}

// with returns the cluster for a subtest.
func (k *cluster) with(t *testing.T) *cluster {
	c := *k
	c.t = t
	return &c
}

func (k *cluster) createTask(name string, mutate ...func(*v1alpha1.AgentTask)) *v1alpha1.AgentTask {
	k.t.Helper()
	task := &v1alpha1.AgentTask{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns},
		Spec:       v1alpha1.AgentTaskSpec{TaskID: "id-" + name, UserID: "user-1", Image: "ghcr.io/acme/agent:1.2"},
	}
	for _, m := range mutate {
		m(task)
	}
	created, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Create(k.t.Context(), task, metav1.CreateOptions{})
	require.NoError(k.t, err)
	return created
}

func (k *cluster) task(name string) *v1alpha1.AgentTask {
	k.t.Helper()
	task, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(k.t, err)
	return task
}

// waitPhase waits until the task reached phase and returns it.
func (k *cluster) waitPhase(name string, phase v1alpha1.TaskPhase) *v1alpha1.AgentTask {
	k.t.Helper()
	var task *v1alpha1.AgentTask
	require.Eventually(k.t, func() bool {
		task = k.task(name)
		return task.Status.Phase == phase
	}, wait, 50*time.Millisecond, "task %s never reached phase %s", name, phase)
	return task
}

// job waits for the task's Job and returns it.
func (k *cluster) job(name string) *batchv1.Job {
	k.t.Helper()
	job := &batchv1.Job{}
	require.Eventually(k.t, func() bool {
		return k.c.Get(context.Background(), types.NamespacedName{Namespace: k.ns, Name: name}, job) == nil
	}, wait, 50*time.Millisecond, "job %s never created", name)
	return job
}

// jobsOf lists every Job labelled for the task.
func (k *cluster) jobsOf(name string) []batchv1.Job {
	k.t.Helper()
	jobs := &batchv1.JobList{}
	require.NoError(k.t, k.c.List(context.Background(), jobs, client.InNamespace(k.ns),
		client.MatchingLabels{"scheduler.opsnorth.io/agent-task": name}))
	return jobs.Items
}

func mustCIDRs(t *testing.T, items ...string) []netip.Prefix {
	t.Helper()
	out, err := webhook.ParseCIDRs(items)
	require.NoError(t, err)
	return out
}
