package tasks_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tasks"
	"opsnorth.io/scheduler/pkg/webhook"
)

// receiver is a webhook receiver on loopback that answers 503 to its first
// `failing` requests and 200 afterwards.
type receiver struct {
	URL     string
	failing atomic.Int32
	mu      sync.Mutex
	got     []*http.Request
	bodies  [][]byte
}

func newReceiver(t *testing.T, ln net.Listener) *receiver {
	r := &receiver{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got, r.bodies = append(r.got, req), append(r.bodies, body)
		r.mu.Unlock()
		if r.failing.Add(-1) >= 0 {
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "thanks")
	}))
	if ln != nil {
		_ = srv.Listener.Close()
		srv.Listener = ln
	}
	srv.Start()
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *receiver) requests() ([]*http.Request, [][]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*http.Request(nil), r.got...), append([][]byte(nil), r.bodies...)
}

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
		ObjectMeta: metav1.ObjectMeta{Name: "hook", Namespace: k.ns}, Data: map[string][]byte{"token": secret},
	}))
	stop := startManager(t, k.ns, testConfig(t, true), nil)

	signed := newReceiver(t, nil)
	k.createTask("signed", func(at *v1alpha1.AgentTask) {
		at.Spec.WebhookURL = signed.URL + "/done?x=1"
		at.Spec.WebhookSecretRef = &v1alpha1.SecretKeyReference{Name: "hook", Key: "token"}
	})
	k.succeed("signed", `{"answer":"42"}`)
	task := k.waitWebhook("signed", func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered })
	assert.Equal(t, int32(1), task.Status.Webhook.Attempts)
	assert.Equal(t, int32(200), task.Status.Webhook.LastStatusCode)
	assert.True(t, meta.IsStatusConditionTrue(task.Status.Conditions, tasks.ConditionWebhookDelivered))
	reqs, bodies := signed.requests()
	require.Len(t, reqs, 1)
	assert.True(t, webhook.Verify(secret, bodies[0], reqs[0].Header.Get(webhook.HeaderSignature)), "signature")
	assert.Equal(t, string(task.UID)+"/completion", reqs[0].Header.Get(webhook.HeaderIdempotencyKey))
	assert.Equal(t, tasks.WebhookEvent, reqs[0].Header.Get(webhook.HeaderEvent))
	assert.Equal(t, "/done", reqs[0].URL.Path)
	var payload tasks.Payload
	require.NoError(t, json.Unmarshal(bodies[0], &payload))
	assert.Equal(t, tasks.Payload{
		Name: "signed", Namespace: k.ns, UID: task.UID, TaskID: "id-signed", UserID: "user-1",
		Phase: v1alpha1.TaskSucceeded, Reason: tasks.ReasonCompleted, Message: task.Status.Message,
		Output: map[string]string{"answer": "42"}, ExitCode: task.Status.ExitCode,
		StartTime: task.Status.StartTime, CompletionTime: task.Status.CompletionTime,
	}, payload)

	// Receiver down (nothing listens), then up but answering 503 once, then 200.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	k.createTask("flaky", func(at *v1alpha1.AgentTask) { at.Spec.WebhookURL = "http://" + addr + "/hook" })
	k.succeed("flaky", "")
	down := k.waitWebhook("flaky", func(d *v1alpha1.WebhookDelivery) bool { return d.Attempts >= 2 })
	assert.Equal(t, int32(0), down.Status.Webhook.LastStatusCode)
	assert.Contains(t, down.Status.Webhook.LastError, "connection refused")
	assert.Equal(t, "Retrying", meta.FindStatusCondition(down.Status.Conditions, tasks.ConditionWebhookDelivered).Reason)
	ln, err = net.Listen("tcp", addr)
	require.NoError(t, err)
	flaky := newReceiver(t, ln)
	flaky.failing.Store(1)
	up := k.waitWebhook("flaky", func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered })
	reqs, bodies = flaky.requests()
	require.Len(t, reqs, 2, "one 503, one 200")
	assert.Equal(t, bodies[0], bodies[1], "every attempt sends the same body")
	assert.Equal(t, reqs[0].Header.Get(webhook.HeaderIdempotencyKey), reqs[1].Header.Get(webhook.HeaderIdempotencyKey))
	assert.Empty(t, reqs[0].Header.Get(webhook.HeaderSignature), "no secret, no signature")
	assert.GreaterOrEqual(t, up.Status.Webhook.Attempts, down.Status.Webhook.Attempts+2)

	// A signing secret that does not exist yet: the attempt fails without a
	// request; once the secret exists the delivery goes out, signed.
	late := newReceiver(t, nil)
	k.createTask("late-secret", func(at *v1alpha1.AgentTask) {
		at.Spec.WebhookURL = late.URL
		at.Spec.WebhookSecretRef = &v1alpha1.SecretKeyReference{Name: "late", Key: "token"}
	})
	k.succeed("late-secret", "")
	missing := k.waitWebhook("late-secret", func(d *v1alpha1.WebhookDelivery) bool { return d.Attempts >= 1 })
	assert.Contains(t, missing.Status.Webhook.LastError, `read webhook secret tasks-webhook/late`)
	reqs, _ = late.requests()
	assert.Empty(t, reqs)
	require.NoError(t, k.c.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: k.ns}, Data: map[string][]byte{"token": []byte("later")},
	}))
	k.waitWebhook("late-secret", func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered })
	reqs, bodies = late.requests()
	require.Len(t, reqs, 1)
	assert.True(t, webhook.Verify([]byte("later"), bodies[0], reqs[0].Header.Get(webhook.HeaderSignature)))

	// A running task is converged too.
	k.createTask("idle")
	k.runPod(k.job("idle"), time.Now())
	k.waitPhase("idle", v1alpha1.TaskRunning)

	// A restarted manager over converged tasks sends nothing and writes nothing.
	stop()
	counter := &writeCounter{}
	reconciled := reconcileCount(t)
	startManager(t, k.ns, testConfig(t, true), counter)
	require.Eventually(t, func() bool { return reconcileCount(t)-reconciled >= 4 }, wait, 50*time.Millisecond)
	// Four reconciles need not be one per task (the task informer's first
	// events reach the queue while the workers already run): keep watching.
	assert.Never(t, func() bool { return counter.writes.Load() != 0 }, settle, 50*time.Millisecond,
		"writes by a manager over converged tasks")
	assert.Zero(t, counter.writes.Load(), "writes by a manager over converged tasks")
	// An unrelated change (by the test's own, uncounted client) reconciles the
	// running task again: still no write.
	reconciled = reconcileCount(t)
	idle := k.task("idle")
	idle.Annotations = map[string]string{"example.com/touched": "yes"}
	_, err = k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Update(t.Context(), idle, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return reconcileCount(t) > reconciled }, wait, 50*time.Millisecond)
	// An Event would be written asynchronously, after the reconcile returned.
	assert.Never(t, func() bool { return counter.writes.Load() != 0 }, settle, 50*time.Millisecond,
		"writes after re-reconciling a converged running task")
	assert.Zero(t, counter.writes.Load(), "writes after re-reconciling a converged running task")
	reqs, _ = signed.requests()
	assert.Len(t, reqs, 1, "a delivered webhook is never sent again")
	reqs, _ = flaky.requests()
	assert.Len(t, reqs, 2, "a delivered webhook is never sent again")
}

// TestWebhookPrivateAddressRefused: without the allow flag a loopback
// receiver is refused at dial time and the delivery gives up at once.
func TestWebhookPrivateAddressRefused(t *testing.T) {
	k := newCluster(t, "tasks-ssrf")
	startManager(t, k.ns, testConfig(t, false), nil)
	rcv := newReceiver(t, nil)
	refused := testutil.ToFloat64(tasks.WebhookDeliveriesTotal.WithLabelValues("refused"))
	k.createTask("ssrf", func(at *v1alpha1.AgentTask) { at.Spec.WebhookURL = rcv.URL + "/steal" })
	k.succeed("ssrf", "")
	task := k.waitWebhook("ssrf", func(d *v1alpha1.WebhookDelivery) bool { return d.GaveUp })
	assert.Equal(t, int32(1), task.Status.Webhook.Attempts)
	assert.False(t, task.Status.Webhook.Delivered)
	assert.Contains(t, task.Status.Webhook.LastError, webhook.ErrAddressRefused.Error())
	assert.Equal(t, "GaveUp", meta.FindStatusCondition(task.Status.Conditions, tasks.ConditionWebhookDelivered).Reason)
	reqs, _ := rcv.requests()
	assert.Empty(t, reqs)
	assert.Equal(t, 1.0, testutil.ToFloat64(tasks.WebhookDeliveriesTotal.WithLabelValues("refused"))-refused)
}
