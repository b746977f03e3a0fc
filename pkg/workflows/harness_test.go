package workflows_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
	"opsnorth.io/scheduler/pkg/workflows"
)

func TestMain(m *testing.M) { testenv.RunMain(m) }

// wait is the Eventually timeout: the machine is shared and loaded.
const wait = 60 * time.Second

// settle is how long a test keeps watching for something that must not
// happen (a write, a delivery) after the manager had its chance to do it: a
// reconcile may trail that long on the loaded machine.
const settle = 5 * time.Second

// startManager runs the workflows manager in-process as its binary runs
// (testkit.StartManager), as a user holding only its generated RBAC with the
// Role bound in namespace, watching namespace, with fast webhook retries to
// loopback receivers and then args.
func startManager(t *testing.T, namespace string, args ...string) *testkit.Manager {
	t.Helper()
	env := testenv.Require(t)
	return testkit.StartManager(t, testkit.ManagerConfig(t, env, "workflows", namespace), workflows.NewComponent(),
		append([]string{"--watch-namespace=" + namespace, "--webhook-allowed-cidrs=127.0.0.0/8",
			"--webhook-retry-base-delay=200ms", "--webhook-retry-max-delay=1s"}, args...)...)
}

// cluster is the test's admin view of the API server.
type cluster struct {
	t    *testing.T
	cs   versioned.Interface
	kube kubernetes.Interface
	ns   string
}

// newCluster creates a fresh namespace for one test.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	env := testenv.Require(t)
	cs, err := versioned.NewForConfig(env.Config)
	require.NoError(t, err)
	kube, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	ns, err := kube.CoreV1().Namespaces().Create(t.Context(), testkit.MakeBackendNamespace("", "wf"), metav1.CreateOptions{})
	require.NoError(t, err)
	return &cluster{t: t, cs: cs, kube: kube, ns: ns.Name}
}

func (k *cluster) create(wf *v1alpha1.Workflow) *v1alpha1.Workflow {
	k.t.Helper()
	wf.Namespace = k.ns
	created, err := k.cs.SchedulerV1alpha1().Workflows(k.ns).Create(context.Background(), wf, metav1.CreateOptions{})
	require.NoError(k.t, err)
	return created
}

func (k *cluster) workflow(name string) *v1alpha1.Workflow {
	k.t.Helper()
	wf, err := k.cs.SchedulerV1alpha1().Workflows(k.ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(k.t, err)
	return wf
}

// waitWorkflow waits until the workflow reaches phase and returns it.
func (k *cluster) waitWorkflow(name string, phase v1alpha1.WorkflowPhase) *v1alpha1.Workflow {
	k.t.Helper()
	return testkit.WaitFor(k.t, wait, func() *v1alpha1.Workflow { return k.workflow(name) },
		func(wf *v1alpha1.Workflow) bool { return wf.Status.Phase == phase }, "workflow %s never reached %s", name, phase)
}

// waitTask waits for the AgentTask of a step attempt and returns it.
func (k *cluster) waitTask(wf, step string, attempt int32) *v1alpha1.AgentTask {
	k.t.Helper()
	name := workflows.TaskName(wf, step, attempt)
	var task *v1alpha1.AgentTask
	require.Eventually(k.t, func() bool {
		var err error
		task, err = k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Get(context.Background(), name, metav1.GetOptions{})
		return err == nil
	}, wait, 10*time.Millisecond, "task %s of step %s never created", name, step)
	return task
}

// gone reports whether the task of a step attempt does not exist.
func (k *cluster) gone(wf, step string, attempt int32) bool {
	_, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Get(context.Background(),
		workflows.TaskName(wf, step, attempt), metav1.GetOptions{})
	return apierrors.IsNotFound(err)
}

// finish plays the tasks manager: it sets the task's terminal status.
func (k *cluster) finish(task *v1alpha1.AgentTask, phase v1alpha1.TaskPhase, output map[string]string) {
	k.t.Helper()
	k.setStatus(task.Name, func(st *v1alpha1.AgentTaskStatus) {
		now := metav1.Now()
		st.Phase, st.Output, st.CompletionTime = phase, output, &now
		if st.StartTime == nil {
			st.StartTime = &now
		}
		if phase != v1alpha1.TaskSucceeded {
			st.Reason, st.Message = "Error", "agent exited with code 1"
			st.ExitCode = new(int32(1))
		}
	})
}

// run sets a task Running, as the tasks manager does once its pod started.
func (k *cluster) run(task *v1alpha1.AgentTask) {
	k.t.Helper()
	k.setStatus(task.Name, func(st *v1alpha1.AgentTaskStatus) {
		now := metav1.Now()
		st.Phase, st.StartTime = v1alpha1.TaskRunning, &now
	})
}

func (k *cluster) setStatus(name string, mutate func(*v1alpha1.AgentTaskStatus)) {
	k.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		task, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(&task.Status)
		_, err = k.cs.SchedulerV1alpha1().AgentTasks(k.ns).UpdateStatus(context.Background(), task, metav1.UpdateOptions{})
		return err
	})
	require.NoError(k.t, err)
}

// taskNames lists the names of the workflow's AgentTasks, sorted.
func (k *cluster) taskNames(wf string) []string {
	k.t.Helper()
	list, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: labelkeys.Workflow + "=" + wf})
	require.NoError(k.t, err)
	names := make([]string, 0, len(list.Items))
	for _, t := range list.Items {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	return names
}

// names returns the sorted task names of step attempts ("step/attempt").
func names(wf string, stepAttempts ...string) []string {
	out := make([]string, 0, len(stepAttempts))
	for _, sa := range stepAttempts {
		var step string
		var attempt int32
		_, err := fmt.Sscanf(sa, "%s %d", &step, &attempt)
		if err != nil {
			panic(err)
		}
		out = append(out, workflows.TaskName(wf, step, attempt))
	}
	sort.Strings(out)
	return out
}

// stepWorkflow builds a workflow of the given steps for user "u1".
func stepWorkflow(name string, steps ...v1alpha1.WorkflowStep) *v1alpha1.Workflow {
	wf := testkit.MakeWorkflow(name, "").Obj()
	wf.Spec.Steps = steps
	return wf
}

func step(name string, input map[string]string, dependsOn ...string) v1alpha1.WorkflowStep {
	return testkit.MakeStep(name).Inputs(input).DependsOn(dependsOn...).Obj()
}
