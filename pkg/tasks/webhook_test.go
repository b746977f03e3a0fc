package tasks_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/tasks"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
	"opsnorth.io/scheduler/pkg/webhook"
	"opsnorth.io/scheduler/pkg/webhook/webhooktest"
)

// succeed runs the task's pod to a successful end.
func (k *cluster) succeed(name, output string) {
	k.t.Helper()
	job := k.job(name)
	pod := k.runPod(job, time.Now().Add(-time.Second))
	k.terminatePod(pod, 0, output)
	k.completeJob(job, time.Now())
}

func (k *cluster) waitWebhook(name string, done func(*v1alpha1.WebhookDelivery) bool) *v1alpha1.AgentTask {
	k.t.Helper()
	var task *v1alpha1.AgentTask
	require.Eventually(k.t, func() bool {
		task = k.task(name)
		return task.Status.Webhook != nil && done(task.Status.Webhook)
	}, wait, 50*time.Millisecond, "webhook of %s", name)
	return task
}

func TestWebhook(t *testing.T) {
	k := newCluster(t, "tasks-webhook")
	secret := []byte("s3cret")
	require.NoError(t, k.c.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hook", Namespace: k.ns, Labels: map[string]string{labelkeys.User: "user-1"}}, Data: map[string][]byte{"token": secret},
	}))
	first := startManager(t, k.ns, testArgs(true)...)

	signed := testkit.NewReceiver(t, testkit.OK)
	k.createTask("signed", func(at *v1alpha1.AgentTask) {
		at.Spec.WebhookURL = signed.URL + "/done?x=1"
		at.Spec.WebhookSecretRef = &v1alpha1.SecretKeyReference{Name: "hook", Key: "token"}
	})
	k.succeed("signed", `{"answer":"42"}`)
	task := k.waitWebhook("signed", func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered })
	assert.Equal(t, int32(1), task.Status.Webhook.Attempts)
	assert.Equal(t, int32(200), task.Status.Webhook.LastStatusCode)
	assert.True(t, meta.IsStatusConditionTrue(task.Status.Conditions, webhook.ConditionDelivered))
	reqs := signed.Requests()
	require.Len(t, reqs, 1)
	assert.NoError(t, webhook.Verify(string(secret), reqs[0].Header, reqs[0].Body, reqs[0].At, webhook.DefaultTolerance), "signature")
	assert.Equal(t, "/done", reqs[0].Path)
	var payload tasks.Payload
	require.NoError(t, json.Unmarshal(reqs[0].Body, &payload))
	assert.Equal(t, tasks.Payload{
		Name: "signed", Namespace: k.ns, UID: task.UID, TaskID: "id-signed", UserID: "user-1",
		Phase: v1alpha1.TaskSucceeded, Reason: tasks.ReasonCompleted, Message: task.Status.Message,
		Output: map[string]string{"answer": "42"}, ExitCode: task.Status.ExitCode,
		StartTime: task.Status.StartTime, CompletionTime: task.Status.CompletionTime,
	}, payload)

	// A running task is converged too.
	k.createTask("idle")
	k.runPod(k.job("idle"), time.Now())
	k.waitPhase("idle", v1alpha1.TaskRunning)

	// A restarted manager over converged tasks sends nothing and writes nothing.
	first.Stop(t)
	reconciled := reconcileCount(t)
	requests := startManager(t, k.ns, testArgs(true)...).Requests
	// The settled task is not watched; the running one is reconciled. The
	// first reconcile need not be the last (the informer's first events
	// reach the queue while the workers already run): keep watching.
	require.Eventually(t, func() bool { return reconcileCount(t)-reconciled >= 1 }, wait, 50*time.Millisecond)
	assert.Never(t, func() bool { return len(requests.Writes()) != 0 }, settle, 50*time.Millisecond,
		"writes by a manager over converged tasks")
	assert.Empty(t, requests.Writes(), "writes by a manager over converged tasks")
	// An unrelated change (by the test's own, uncounted client) reconciles the
	// running task again: still no write.
	reconciled = reconcileCount(t)
	idle := k.task("idle")
	idle.Annotations = map[string]string{"example.com/touched": "yes"}
	_, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Update(t.Context(), idle, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return reconcileCount(t) > reconciled }, wait, 50*time.Millisecond)
	// An Event would be written asynchronously, after the reconcile returned.
	assert.Never(t, func() bool { return len(requests.Writes()) != 0 }, settle, 50*time.Millisecond,
		"writes after re-reconciling a converged running task")
	assert.Empty(t, requests.Writes(), "writes after re-reconciling a converged running task")
	assert.Len(t, signed.Requests(), 1, "a delivered webhook is never sent again")
}

// TestWebhookPrivateAddressRefused: without the allow flag a loopback
// receiver is refused at dial time and the delivery gives up at once.
func TestWebhookPrivateAddressRefused(t *testing.T) {
	k := newCluster(t, "tasks-ssrf")
	startManager(t, k.ns, testArgs(false)...)
	rcv := testkit.NewReceiver(t, testkit.OK)
	refused := testutil.ToFloat64(webhook.Deliveries("AgentTask", "refused"))
	k.createTask("ssrf", func(at *v1alpha1.AgentTask) { at.Spec.WebhookURL = rcv.URL + "/steal" })
	k.succeed("ssrf", "")
	task := k.waitWebhook("ssrf", func(d *v1alpha1.WebhookDelivery) bool { return d.GaveUp })
	assert.Equal(t, int32(1), task.Status.Webhook.Attempts)
	assert.False(t, task.Status.Webhook.Delivered)
	assert.Contains(t, task.Status.Webhook.LastError, webhook.ErrAddressRefused.Error())
	assert.Equal(t, "GaveUp", meta.FindStatusCondition(task.Status.Conditions, webhook.ConditionDelivered).Reason)
	assert.Empty(t, rcv.Requests())
	// Counted after the attempt's status write returns: it may trail the status.
	assert.Eventually(t, func() bool {
		return testutil.ToFloat64(webhook.Deliveries("AgentTask", "refused"))-refused == 1
	}, wait, 20*time.Millisecond, "refused deliveries counter")
}

// TestWebhookConformance runs the delivery suite every kind passes.
func TestWebhookConformance(t *testing.T) {
	webhooktest.Run(t, taskKind{k: newCluster(t, "tasks-webhook-conformance")})
}

// taskKind drives AgentTasks for the conformance suite.
type taskKind struct{ k *cluster }

func (taskKind) Name() string        { return "AgentTask" }
func (taskKind) Event() string       { return tasks.WebhookEvent }
func (a taskKind) Namespace() string { return a.k.ns }
func (a taskKind) Kube() kubernetes.Interface {
	return kubernetes.NewForConfigOrDie(testenv.Require(a.k.t).Config)
}

func (a taskKind) Start(t *testing.T, s webhooktest.Settings) func() {
	m := startManager(t, a.k.ns, append(testArgs(true), s.Args()...)...)
	return func() { m.Stop(t) }
}

func (a taskKind) Finish(_ *testing.T, name, url string, secret *v1alpha1.SecretKeyReference) {
	a.k.createTask(name, func(at *v1alpha1.AgentTask) { at.Spec.WebhookURL, at.Spec.WebhookSecretRef = url, secret })
	a.k.succeed(name, "")
}

func (a taskKind) Observe(name string) (webhooktest.Observed, error) {
	task, err := a.k.cs.SchedulerV1alpha1().AgentTasks(a.k.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return webhooktest.Observed{}, err
	}
	return webhooktest.Observed{UID: task.UID, Webhook: task.Status.Webhook, Conditions: task.Status.Conditions}, nil
}
