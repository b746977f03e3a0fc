package workflows_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// receiver records the webhook deliveries it gets and answers 503 to the
// first `fail` of them.
type receiver struct {
	mu       sync.Mutex
	fail     int
	requests []*http.Request
	bodies   [][]byte
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, req)
	r.bodies = append(r.bodies, body)
	if len(r.requests) <= r.fail {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.requests)
}

// TestWebhookRefusedAddressGivesUp: the SSRF guard refuses a link-local
// receiver (the cloud metadata address) even though loopback is allowed;
// each refused attempt is recorded and delivery gives up after
// --webhook-max-attempts, with a Warning event.
func TestWebhookRefusedAddressGivesUp(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns, "--webhook-max-attempts=2")
	wf := stepWorkflow("ssrf", step("a", nil))
	wf.Spec.WebhookURL = "http://169.254.169.254/latest/meta-data"
	k.create(wf)
	k.finish(k.waitTask("ssrf", "a", 0), v1alpha1.TaskSucceeded, nil)
	k.waitWorkflow("ssrf", v1alpha1.WorkflowSucceeded)
	require.Eventually(t, func() bool {
		st := k.workflow("ssrf").Status.Webhook
		return st != nil && st.GaveUp
	}, wait, 20*time.Millisecond)
	st := k.workflow("ssrf").Status.Webhook
	assert.Equal(t, int32(2), st.Attempts)
	assert.False(t, st.Delivered)
	assert.Equal(t, int32(0), st.LastStatusCode)
	assert.True(t, strings.Contains(st.LastError, "webhook address refused: 169.254.169.254 is not a public address"), st.LastError)
}

// TestWebhookMissingSecret: a webhookSecretRef to a Secret that does not
// exist is never sent unsigned; the attempts say why.
func TestWebhookMissingSecret(t *testing.T) {
	k := newCluster(t)
	recv := &receiver{}
	srv := httptestServer(t, recv)
	startManager(t, k.ns, "--webhook-max-attempts=2")
	wf := stepWorkflow("nosecret", step("a", nil))
	wf.Spec.WebhookURL = srv
	wf.Spec.WebhookSecretRef = &v1alpha1.SecretKeyReference{Name: "missing", Key: "k"}
	k.create(wf)
	k.finish(k.waitTask("nosecret", "a", 0), v1alpha1.TaskSucceeded, nil)
	finished := time.Now()
	require.Eventually(t, func() bool {
		st := k.workflow("nosecret").Status.Webhook
		return st != nil && st.GaveUp
	}, wait, 20*time.Millisecond)
	st := k.workflow("nosecret").Status.Webhook
	assert.GreaterOrEqual(t, time.Since(finished), 200*time.Millisecond, "the second attempt waited for the backoff")
	assert.Equal(t, int32(2), st.Attempts)
	assert.Contains(t, st.LastError, `webhook secret missing: secrets "missing" not found`)
	assert.Equal(t, 0, recv.count(), "an unsigned body is never sent")
}

func httptestServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
