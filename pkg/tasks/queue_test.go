package tasks_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/tasks"
	"opsnorth.io/scheduler/pkg/testenv"
)

// admit plays Kueue and the Job controller on a queued Job: Kueue
// unsuspends it, the Job controller (re)sets its startTime.
func (k *cluster) admit(job *batchv1.Job, at time.Time) {
	k.t.Helper()
	live := &batchv1.Job{}
	require.NoError(k.t, k.c.Get(k.t.Context(), client.ObjectKeyFromObject(job), live))
	live.Spec.Suspend = ptr.To(false)
	require.NoError(k.t, k.c.Update(k.t.Context(), live))
	k.startJob(live, at)
}

// installLocalQueues installs Kueue's LocalQueue CRD (testdata, unmodified
// from sigs.k8s.io/kueue v0.17.0) and waits until it is served.
func installLocalQueues(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "kueue.x-k8s.io_localqueues.yaml"))
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.Unmarshal(data, crd))
	cs := apiextensionsclient.NewForConfigOrDie(testenv.Require(t).Config)
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(t.Context(), crd, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(t.Context(), crd.Name, metav1.GetOptions{})
		return err == nil && slices.ContainsFunc(got.Status.Conditions, func(c apiextensionsv1.CustomResourceDefinitionCondition) bool {
			return c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
		})
	}, time.Minute, 50*time.Millisecond, "the LocalQueue CRD is never established")
}

// createLocalQueue creates a LocalQueue with labels; no Kueue runs to use it.
func (k *cluster) createLocalQueue(name string, labels map[string]string) {
	k.t.Helper()
	lq := &unstructured.Unstructured{}
	lq.SetAPIVersion("kueue.x-k8s.io/v1beta2")
	lq.SetKind("LocalQueue")
	lq.SetNamespace(k.ns)
	lq.SetName(name)
	lq.SetLabels(labels)
	require.NoError(k.t, unstructured.SetNestedField(lq.Object, "cluster-queue", "spec", "clusterQueue"))
	require.NoError(k.t, k.c.Create(k.t.Context(), lq))
}

// TestQueued: a task with a queueName has a suspended Job in that Kueue
// LocalQueue, says Queued while Kueue holds it, and its start timeout does
// not run until the Job is admitted; then it runs and succeeds as any task.
// The LocalQueue must exist and be the user's or shared, as any object a
// task names. The real Kueue admits such Jobs in test/e2e (TestKueueQueue).
func TestQueued(t *testing.T) {
	installLocalQueues(t)
	k := newCluster(t, "tasks-queue")
	k.createLocalQueue("agents", map[string]string{labelkeys.Shared: labelkeys.SharedValue})
	k.createLocalQueue("bobs", map[string]string{labelkeys.User: "bob"})
	startManager(t, k.ns, append(testArgs(false), "--pending-status-delay=0")...)

	t.Run("a missing queue keeps the task Pending, without a Job, until it exists", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("later", func(at *v1alpha1.AgentTask) { at.Spec.QueueName = "later" })
		task, _ := k.waitReason("later", tasks.ReasonQueueNotFound)
		assert.Equal(t, v1alpha1.TaskPending, task.Status.Phase)
		assert.Equal(t, "spec.queueName: LocalQueue tasks-queue/later not found", task.Status.Message)
		k.createLocalQueue("later", map[string]string{labelkeys.User: "user-1"})
		job := k.job("later")
		assert.Equal(t, "later", job.Labels[tasks.KueueQueueLabel])
	})
	t.Run("another user's queue fails the task", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("foreign", func(at *v1alpha1.AgentTask) { at.Spec.QueueName = "bobs" })
		task := k.waitPhase("foreign", v1alpha1.TaskFailed)
		assert.Equal(t, tasks.ReasonReferenceNotAllowed, task.Status.Reason)
		assert.Equal(t, "spec.queueName: not allowed for this user: LocalQueue tasks-queue/bobs is labelled neither "+
			"scheduler.opsnorth.io/user=user-1 nor scheduler.opsnorth.io/shared=true", task.Status.Message)
	})

	t.Run("held, admitted, run", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("queued", func(at *v1alpha1.AgentTask) {
			at.Spec.QueueName = "agents"
			at.Spec.StartTimeoutSeconds = ptr.To[int64](1)
		})
		job := k.job("queued")
		assert.Equal(t, ptr.To(true), job.Spec.Suspend, "created suspended, as Kueue expects")
		assert.Equal(t, "agents", job.Labels[tasks.KueueQueueLabel])
		task, _ := k.waitReason("queued", tasks.ReasonQueued)
		assert.Equal(t, v1alpha1.TaskPending, task.Status.Phase)
		assert.Equal(t, "waiting in LocalQueue agents for admission by Kueue", task.Status.Message)
		k.assertStays("queued", v1alpha1.TaskPending) // 5 s, five times its start timeout

		k.admit(job, time.Now())
		pod := k.runPod(job, time.Now())
		k.waitPhase("queued", v1alpha1.TaskRunning)
		k.terminatePod(pod, 0, `{"answer":"42"}`)
		task = k.waitPhase("queued", v1alpha1.TaskSucceeded)
		assert.Equal(t, map[string]string{"answer": "42"}, task.Status.Output)
	})
	t.Run("admitted but not started: the start timeout counts from admission", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("stuck", func(at *v1alpha1.AgentTask) {
			at.Spec.QueueName = "agents"
			at.Spec.StartTimeoutSeconds = ptr.To[int64](2)
		})
		job := k.job("stuck")
		k.waitReason("stuck", tasks.ReasonQueued)
		time.Sleep(3 * time.Second) // longer than the start timeout, in the queue
		admitted := time.Now()
		k.admit(job, admitted)
		task := k.waitPhase("stuck", v1alpha1.TaskFailed)
		assert.Equal(t, tasks.ReasonStartTimeout, task.Status.Reason)
		assert.GreaterOrEqual(t, time.Since(admitted), 2*time.Second, "failed before its start timeout after admission")
	})
	t.Run("cancelled while queued", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("dropped", func(at *v1alpha1.AgentTask) { at.Spec.QueueName = "agents" })
		k.job("dropped")
		k.waitReason("dropped", tasks.ReasonQueued)
		k.cancel("dropped")
		task := k.waitPhase("dropped", v1alpha1.TaskFailed)
		assert.Equal(t, tasks.ReasonCancelled, task.Status.Reason)
		k.jobStopped("dropped")
	})
}
