// Package webhooktest is the completion-webhook conformance suite that every
// kind delivered by pkg/webhook passes on the test API server.
package webhooktest

import (
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/tenancy"
	"opsnorth.io/scheduler/pkg/testkit"
	"opsnorth.io/scheduler/pkg/webhook"
)

// Settings are the webhook flags the suite runs a manager with.
type Settings struct {
	Timeout     time.Duration
	MaxAttempts int32
	BaseDelay   time.Duration
	MaxDelay    time.Duration
}

// Args are the settings as the managers' --webhook-* flags.
func (s Settings) Args() []string {
	return []string{"--webhook-timeout=" + s.Timeout.String(), "--webhook-max-attempts=" + strconv.Itoa(int(s.MaxAttempts)),
		"--webhook-retry-base-delay=" + s.BaseDelay.String(), "--webhook-retry-max-delay=" + s.MaxDelay.String()}
}

// Observed is what a user sees of an object's delivery.
type Observed struct {
	UID        types.UID
	Webhook    *v1alpha1.WebhookDelivery
	Conditions []metav1.Condition
}

// Kind is one delivered kind, as its package's test harness drives it.
type Kind interface {
	// Name is the kind, e.g. "AgentTask": the metric's kind label.
	Name() string
	// Event is the X-Opsnorth-Event header its webhooks carry.
	Event() string
	// Namespace is where the suite's objects and Secrets are created.
	Namespace() string
	// Kube is an admin client.
	Kube() kubernetes.Interface
	// Start runs the kind's manager with s, allowing loopback receivers;
	// stop returns once it stopped.
	Start(t *testing.T, s Settings) (stop func())
	// Finish creates object name with the webhook and brings it to a
	// successful terminal phase.
	Finish(t *testing.T, name, url string, secret *v1alpha1.SecretKeyReference)
	// Observe reads the object.
	Observe(name string) (Observed, error)
}

// suiteSettings retry fast and often enough for a receiver down for 30 s.
var suiteSettings = Settings{Timeout: time.Second, MaxAttempts: 40, BaseDelay: 200 * time.Millisecond, MaxDelay: time.Second}

const wait = 90 * time.Second

// Run is the conformance suite: every kind delivers the same way.
func Run(t *testing.T, k Kind) {
	s := &suite{k: k}
	s.secret(t, "hook", "token", "s3cret")
	s.secret(t, "blank", "token", "")
	s.secret(t, "bad-whsec", "token", "whsec_not!base64")
	refused := testutil.ToFloat64(webhook.Deliveries(k.Name(), "refused"))
	gaveUp := testutil.ToFloat64(webhook.GaveUp(k.Name()))
	stop := k.Start(t, suiteSettings)

	ok := testkit.NewReceiver(t, testkit.OK)
	k.Finish(t, "ok", ok.URL+"/hook?x=1", &v1alpha1.SecretKeyReference{Name: "hook", Key: "token"})
	flaky := testkit.NewReceiver(t, testkit.FailFirst(2, http.StatusServiceUnavailable))
	k.Finish(t, "flaky", flaky.URL+"/hook", nil)
	slow := testkit.NewReceiver(t, testkit.HangFirst(1, 10*time.Second))
	k.Finish(t, "slow", slow.URL+"/hook", nil)
	k.Finish(t, "refused", "http://169.254.169.254/latest/meta-data", nil)
	late := testkit.NewReceiver(t, testkit.OK)
	k.Finish(t, "missing-secret", late.URL+"/hook", &v1alpha1.SecretKeyReference{Name: "late", Key: "token"})
	blank := testkit.NewReceiver(t, testkit.OK)
	k.Finish(t, "empty-secret", blank.URL+"/hook", &v1alpha1.SecretKeyReference{Name: "blank", Key: "token"})
	badWhsec := testkit.NewReceiver(t, testkit.OK)
	k.Finish(t, "invalid-whsec-secret", badWhsec.URL+"/hook", &v1alpha1.SecretKeyReference{Name: "bad-whsec", Key: "token"})
	signedBy := map[string]*testkit.Receiver{"late": late, "blank": blank, "bad-whsec": badWhsec}
	// Created after the object, so the tasks manager's check before the
	// Job finds nothing and the delivery's own check is what refuses it.
	foreign := testkit.NewReceiver(t, testkit.OK)
	k.Finish(t, "foreign-secret", foreign.URL+"/hook", &v1alpha1.SecretKeyReference{Name: "mallory", Key: "token"})
	s.labelledSecret(t, "mallory", "token", "not-yours", map[string]string{labelkeys.User: "mallory"})
	redirect := testkit.NewReceiver(t, testkit.Redirect("/elsewhere"))
	k.Finish(t, "redirect", redirect.URL+"/hook", nil)
	downURL, listen := closedPort(t)
	k.Finish(t, "down", downURL, nil)

	t.Run("2xx", func(t *testing.T) {
		o := s.wait(t, "ok", func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered })
		assert.Equal(t, int32(1), o.Webhook.Attempts)
		assert.Equal(t, int32(200), o.Webhook.LastStatusCode)
		s.condition(t, o, metav1.ConditionTrue, "Delivered")
		got := ok.Requests()
		require.Len(t, got, 1)
		assert.Equal(t, "/hook", got[0].Path)
		assert.Equal(t, string(o.UID)+"/completion", got[0].Header.Get(webhook.HeaderIdempotencyKey))
		assert.Equal(t, k.Event(), got[0].Header.Get(webhook.HeaderEvent))
		assert.Equal(t, "application/json", got[0].Header.Get("Content-Type"))
		assert.Equal(t, got[0].Header.Get(webhook.HeaderIdempotencyKey), got[0].Header.Get(webhook.HeaderWebhookID))
		assert.NoError(t, webhook.Verify("s3cret", got[0].Header, got[0].Body, got[0].At, webhook.DefaultTolerance), "signed")
		assert.Empty(t, got[0].Header.Get("X-Opsnorth-Signature"), "the old signature header is gone")
		s.event(t, "ok", "WebhookDelivered", "delivered after 1 attempt")
	})
	t.Run("5xx then 2xx", func(t *testing.T) {
		o := s.wait(t, "flaky", func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered })
		assert.Equal(t, int32(3), o.Webhook.Attempts)
		got := flaky.Requests()
		require.Len(t, got, 3)
		for i, g := range got[1:] {
			assert.Equal(t, got[0].Body, g.Body, "every attempt sends the same body")
			assert.Equal(t, got[0].Header.Get(webhook.HeaderIdempotencyKey), g.Header.Get(webhook.HeaderIdempotencyKey))
			assert.Equal(t, got[0].Header.Get(webhook.HeaderWebhookID), g.Header.Get(webhook.HeaderWebhookID), "one id for every attempt")
			// A retry waits past the second of the last attempt: its timestamp is later.
			assert.Greater(t, unix(t, g), unix(t, got[i]), "every attempt has its own timestamp")
		}
		assert.Equal(t, got[0].Header.Get(webhook.HeaderIdempotencyKey), got[0].Header.Get(webhook.HeaderWebhookID))
		assert.Empty(t, got[0].Header.Values(webhook.HeaderWebhookSignature), "no secret, no signature")
		s.event(t, "flaky", "WebhookFailed", "receiver answered 503")
	})
	t.Run("timeout", func(t *testing.T) {
		o := s.wait(t, "slow", func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered })
		assert.Equal(t, int32(2), o.Webhook.Attempts)
		assert.Len(t, slow.Requests(), 2)
		s.event(t, "slow", "WebhookFailed", "Timeout")
	})
	t.Run("refused address is terminal", func(t *testing.T) {
		o := s.wait(t, "refused", func(d *v1alpha1.WebhookDelivery) bool { return d.GaveUp })
		assert.Equal(t, int32(1), o.Webhook.Attempts, "no retry")
		assert.Zero(t, o.Webhook.LastStatusCode)
		assert.Equal(t, "webhook address refused: the receiver resolved to a cloud metadata address", o.Webhook.LastError,
			"the class of address, never the address")
		s.condition(t, o, metav1.ConditionFalse, "GaveUp")
		s.event(t, "refused", "WebhookGaveUp", "after 1 attempt")
		assert.Equal(t, 1.0, testutil.ToFloat64(webhook.Deliveries(k.Name(), "refused"))-refused)
		assert.GreaterOrEqual(t, testutil.ToFloat64(webhook.GaveUp(k.Name()))-gaveUp, 1.0, "counted as given up")
	})
	for _, tc := range []struct{ name, object, secret, want, fixed string }{
		{"missing secret", "missing-secret", "late", `secrets "late" not found`, "fixed-late"},
		{"empty secret", "empty-secret", "blank", `key "token" of webhook secret ` + k.Namespace() + `/blank is empty`, "fixed-blank"},
		{"invalid whsec_ secret", "invalid-whsec-secret", "bad-whsec",
			`key "token" of webhook secret ` + k.Namespace() + `/bad-whsec is not valid base64 after whsec_`,
			"whsec_Zml4ZWQtd2hzZWMta2V5"}, // base64 of "fixed-whsec-key"
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := s.wait(t, tc.object, func(d *v1alpha1.WebhookDelivery) bool { return d.Attempts >= 2 })
			assert.Contains(t, o.Webhook.LastError, tc.want)
			s.condition(t, o, metav1.ConditionFalse, "Retrying")
			rcv := signedBy[tc.secret]
			assert.NotContains(t, o.Webhook.LastError, "not!base64", "the reason, never the secret")
			assert.Empty(t, rcv.Requests(), "never sent unsigned")
			s.secret(t, tc.secret, "token", tc.fixed)
			s.wait(t, tc.object, func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered })
			got := rcv.Requests()
			require.Len(t, got, 1)
			assert.NoError(t, webhook.Verify(tc.fixed, got[0].Header, got[0].Body, got[0].At, webhook.DefaultTolerance))
		})
	}
	t.Run("another user's secret", func(t *testing.T) {
		o := s.wait(t, "foreign-secret", func(d *v1alpha1.WebhookDelivery) bool {
			return d.Attempts >= 2 && strings.Contains(d.LastError, tenancy.ErrNotAllowed.Error())
		})
		assert.Contains(t, o.Webhook.LastError, "spec.webhookSecretRef: not allowed for this user: Secret "+k.Namespace()+
			"/mallory is labelled neither scheduler.opsnorth.io/user=")
		s.condition(t, o, metav1.ConditionFalse, "Retrying")
		assert.Empty(t, foreign.Requests(), "never sent, signed or not")
		s.secret(t, "mallory", "token", "shared-now")
		s.wait(t, "foreign-secret", func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered })
		got := foreign.Requests()
		require.Len(t, got, 1)
		assert.NoError(t, webhook.Verify("shared-now", got[0].Header, got[0].Body, got[0].At, webhook.DefaultTolerance))
	})
	t.Run("redirect is not followed", func(t *testing.T) {
		o := s.wait(t, "redirect", func(d *v1alpha1.WebhookDelivery) bool { return d.Attempts >= 2 })
		assert.False(t, o.Webhook.Delivered)
		assert.Equal(t, int32(302), o.Webhook.LastStatusCode)
		for _, g := range redirect.Requests() {
			assert.Equal(t, "/hook", g.Path)
		}
	})
	t.Run("receiver down for 30s", func(t *testing.T) {
		o := s.wait(t, "down", func(d *v1alpha1.WebhookDelivery) bool { return d.Attempts >= 1 })
		firstFailure := o.Webhook.LastAttemptTime.Time
		time.Sleep(time.Until(firstFailure.Add(30 * time.Second)))
		o, err := k.Observe("down")
		require.NoError(t, err)
		assert.False(t, o.Webhook.Delivered)
		assert.GreaterOrEqual(t, o.Webhook.Attempts, int32(5), "retried while down")
		assert.Contains(t, o.Webhook.LastError, "connection refused")
		up := listen(testkit.OK)
		o = s.wait(t, "down", func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered })
		assert.Len(t, up.Requests(), 1)
	})

	// A manager stopped between a failed attempt and its retry: the next
	// one waits out the backoff, sends the same delivery and stops there.
	restart := testkit.NewReceiver(t, testkit.FailFirst(1, http.StatusServiceUnavailable))
	k.Finish(t, "restart", restart.URL+"/hook", nil)
	s.wait(t, "restart", func(d *v1alpha1.WebhookDelivery) bool { return d.Attempts >= 1 })
	stop()
	require.Len(t, restart.Requests(), 1)
	k.Start(t, suiteSettings)
	t.Run("manager restart mid-backoff", func(t *testing.T) {
		o := s.wait(t, "restart", func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered })
		assert.Equal(t, int32(2), o.Webhook.Attempts)
		got := restart.Requests()
		require.Len(t, got, 2)
		assert.Equal(t, got[0].Header.Get(webhook.HeaderIdempotencyKey), got[1].Header.Get(webhook.HeaderIdempotencyKey))
		assert.Equal(t, got[0].Header.Get(webhook.HeaderWebhookID), got[1].Header.Get(webhook.HeaderWebhookID))
		assert.Greater(t, unix(t, got[1]), unix(t, got[0]), "the next leader dates its own attempt")
		assert.Equal(t, got[0].Body, got[1].Body)
		time.Sleep(3 * time.Second)
		assert.Len(t, restart.Requests(), 2, "a delivered webhook is never sent again")
		assert.Len(t, ok.Requests(), 1, "a delivered webhook is never sent again")
		assert.Len(t, flaky.Requests(), 3, "a delivered webhook is never sent again")
	})
}

type suite struct{ k Kind }

// unix is a request's webhook-timestamp.
func unix(t *testing.T, g testkit.Got) int64 {
	t.Helper()
	ts, err := strconv.ParseInt(g.Header.Get(webhook.HeaderWebhookTimestamp), 10, 64)
	require.NoError(t, err, "webhook-timestamp")
	return ts
}

// secret creates or replaces a Secret holding key=value.
// secret creates or replaces a signing Secret that every user may use.
func (s *suite) secret(t *testing.T, name, key, value string) {
	t.Helper()
	s.labelledSecret(t, name, key, value, map[string]string{labelkeys.Shared: labelkeys.SharedValue})
}

func (s *suite) labelledSecret(t *testing.T, name, key, value string, labels map[string]string) {
	t.Helper()
	obj := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.k.Namespace(), Labels: labels},
		Data:       map[string][]byte{key: []byte(value)},
	}
	secrets := s.k.Kube().CoreV1().Secrets(s.k.Namespace())
	if _, err := secrets.Create(t.Context(), obj, metav1.CreateOptions{}); err == nil {
		return
	}
	_, err := secrets.Update(t.Context(), obj, metav1.UpdateOptions{})
	require.NoError(t, err)
}

func (s *suite) wait(t *testing.T, name string, done func(*v1alpha1.WebhookDelivery) bool) Observed {
	t.Helper()
	var o Observed
	require.Eventually(t, func() bool {
		got, err := s.k.Observe(name)
		if err != nil {
			return false
		}
		o = got
		return o.Webhook != nil && done(o.Webhook)
	}, wait, 50*time.Millisecond, "webhook of %s %s: %+v", s.k.Name(), name, o.Webhook)
	return o
}

func (s *suite) condition(t *testing.T, o Observed, status metav1.ConditionStatus, reason string) {
	t.Helper()
	c := meta.FindStatusCondition(o.Conditions, webhook.ConditionDelivered)
	require.NotNil(t, c, "WebhookDelivered condition")
	assert.Equal(t, status, c.Status)
	assert.Equal(t, reason, c.Reason)
}

// event waits for an Event about the object with reason and a note containing text.
func (s *suite) event(t *testing.T, name, reason, text string) {
	t.Helper()
	var notes []string
	assert.Eventually(t, func() bool {
		list, err := s.k.Kube().EventsV1().Events(s.k.Namespace()).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		notes = notes[:0]
		for _, e := range list.Items {
			if e.Regarding.Name == name && e.Regarding.Kind == s.k.Name() && e.Reason == reason {
				notes = append(notes, e.Note)
			}
		}
		return slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, text) })
	}, wait, 100*time.Millisecond, "%s Event of %s %s containing %q: %q", reason, s.k.Name(), name, text, notes)
}

// closedPort returns a receiver URL nothing listens on, and a function that
// starts a receiver there.
func closedPort(t *testing.T) (string, func(testkit.Handler) *testkit.Receiver) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr + "/hook", func(h testkit.Handler) *testkit.Receiver {
		ln, err := net.Listen("tcp", addr)
		require.NoError(t, err)
		return testkit.NewReceiverOn(t, ln, h)
	}
}
