package tasks_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/tasks"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
)

func TestMain(m *testing.M) { testenv.RunMain(m) }

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

// startManager runs the tasks manager in-process as its binary runs
// (testkit.StartManager) as an admin, watching namespace, with testArgs
// and then args, until it is stopped or the test ends.
func startManager(t *testing.T, namespace string, args ...string) *testkit.Manager {
	t.Helper()
	return startManagerAs(t, testenv.Require(t).Config, namespace, args...)
}

// startManagerAs is startManager with the manager's identity.
func startManagerAs(t *testing.T, base *rest.Config, namespace string, args ...string) *testkit.Manager {
	t.Helper()
	return testkit.StartManager(t, base, tasks.NewComponent(),
		append([]string{"--watch-namespace=" + namespace, "--max-concurrent-reconciles=4"}, args...)...)
}

// testArgs are the default flags with fast webhook retries and, with
// allowLoopback, the loopback receivers of the tests allowed.
func testArgs(allowLoopback bool) []string {
	args := []string{"--webhook-retry-base-delay=300ms", "--webhook-retry-max-delay=1s",
		"--webhook-max-attempts=8", "--webhook-timeout=3s"}
	if allowLoopback {
		args = append(args, "--webhook-allowed-cidrs=127.0.0.0/8")
	}
	return args
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
	require.NoError(t, c.Create(t.Context(), testkit.MakeBackendNamespace(namespace, "")))
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
	task := testkit.MakeAgentTask(name, k.ns).Obj()
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
	return testkit.WaitFor(k.t, wait, func() *v1alpha1.AgentTask { return k.task(name) },
		func(task *v1alpha1.AgentTask) bool { return task.Status.Phase == phase }, "task %s never reached phase %s", name, phase)
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
