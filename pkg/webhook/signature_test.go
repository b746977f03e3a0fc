package webhook

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/events"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testkit"
)

// whsecSecret is "whsec_" and the base64 of whsecKey.
const (
	whsecKey    = "sixteen byte key"
	whsecSecret = "whsec_c2l4dGVlbiBieXRlIGtleQ=="
)

var t2026 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // unix 1767225600

func TestSignKnownAnswer(t *testing.T) {
	// printf '%s' 'uid-1/completion.1767225600.{"phase":"Succeeded"}' | openssl dgst -sha256 -hmac KEY -binary | base64
	body := []byte(`{"phase":"Succeeded"}`)
	tests := []struct {
		name string
		key  []byte
		want string
	}{
		{"raw key", []byte("k"), "v1,0yqlOuMuqiDP4E154q+cYdfe9RVyCpZdQRA5r4sEqCY="},
		{"decoded whsec_ key", []byte(whsecKey), "v1,tU4AY+P0j/taXihU53lMhfBqAZxI8Rmi7yKuVr4S4Co="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Sign(tt.key, "uid-1/completion", t2026, body))
			assert.Equal(t, tt.want, Sign(tt.key, "uid-1/completion", t2026.Add(999*time.Millisecond), body), "whole seconds")
		})
	}
}

func TestParseSecret(t *testing.T) {
	tests := []struct {
		name, value string
		want        string // the key; empty when err
		err         string
	}{
		{name: "raw", value: "s3cret", want: "s3cret"},
		{name: "raw that looks like base64 stays raw", value: "c2l4dGVlbiBieXRlIGtleQ==", want: "c2l4dGVlbiBieXRlIGtleQ=="},
		{name: "prefix elsewhere stays raw", value: "my_whsec_key", want: "my_whsec_key"},
		{name: "whsec_", value: whsecSecret, want: whsecKey},
		{name: "whsec_ with a trailing newline", value: whsecSecret + "\n", want: whsecKey},
		{name: "whsec_ not base64", value: "whsec_not base64!", err: "invalid webhook secret: not valid base64 after whsec_"},
		{name: "whsec_ unpadded", value: "whsec_c2l4dGVlbiBieXRlIGtleQ", err: "invalid webhook secret: not valid base64 after whsec_"},
		{name: "whsec_ alone", value: "whsec_", err: "invalid webhook secret: empty after whsec_"},
		{name: "empty", value: "", err: "invalid webhook secret: empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, err := ParseSecret([]byte(tt.value))
			if tt.err != "" {
				assert.ErrorIs(t, err, ErrInvalidSecret)
				assert.EqualError(t, err, tt.err)
				assert.Nil(t, key)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(key))
		})
	}
}

func TestVerify(t *testing.T) {
	body := []byte(`{"phase":"Succeeded"}`)
	const id = "uid-1/completion"
	signed := func(secret string, ts time.Time) http.Header {
		key, err := ParseSecret([]byte(secret))
		require.NoError(t, err)
		h := http.Header{}
		h.Set(HeaderWebhookID, id)
		h.Set(HeaderWebhookTimestamp, strconv.FormatInt(ts.Unix(), 10))
		h.Set(HeaderWebhookSignature, Sign(key, id, ts, body))
		return h
	}
	tests := []struct {
		name      string
		secret    string
		header    func() http.Header
		body      string
		now       time.Time
		tolerance time.Duration
		err       error // nil: verified
	}{
		{name: "raw secret", secret: "k", header: func() http.Header { return signed("k", t2026) }},
		{name: "whsec_ secret", secret: whsecSecret, header: func() http.Header { return signed(whsecSecret, t2026) }},
		{name: "wrong secret", secret: "other", header: func() http.Header { return signed("k", t2026) }, err: ErrNoMatchingSignature},
		{name: "whsec_ form of the same key", secret: "whsec_aw==", header: func() http.Header { return signed("k", t2026) }},
		{name: "tampered body", secret: "k", header: func() http.Header { return signed("k", t2026) }, body: `{"phase":"Failed"}`,
			err: ErrNoMatchingSignature},
		{name: "tampered id", secret: "k", header: func() http.Header {
			h := signed("k", t2026)
			h.Set(HeaderWebhookID, "uid-2/completion")
			return h
		}, err: ErrNoMatchingSignature},
		{name: "tampered timestamp", secret: "k", header: func() http.Header {
			h := signed("k", t2026)
			h.Set(HeaderWebhookTimestamp, strconv.FormatInt(t2026.Unix()+1, 10))
			return h
		}, err: ErrNoMatchingSignature},
		{name: "rotation: one of several signatures", secret: "k", header: func() http.Header {
			h := signed("k", t2026)
			h.Set(HeaderWebhookSignature, "v1a,c2lnbmF0dXJl  v1,b2xkIGtleQ== "+h.Get(HeaderWebhookSignature))
			return h
		}},
		{name: "version other than v1", secret: "k", header: func() http.Header {
			h := signed("k", t2026)
			h.Set(HeaderWebhookSignature, "v2,"+strings.TrimPrefix(h.Get(HeaderWebhookSignature), "v1,"))
			return h
		}, err: ErrNoMatchingSignature},
		{name: "old but within tolerance", secret: "k", header: func() http.Header { return signed("k", t2026) },
			now: t2026.Add(DefaultTolerance)},
		{name: "replayed past tolerance", secret: "k", header: func() http.Header { return signed("k", t2026) },
			now: t2026.Add(DefaultTolerance + time.Second), err: ErrTimestampTooOld},
		{name: "early but within tolerance", secret: "k", header: func() http.Header { return signed("k", t2026) },
			now: t2026.Add(-DefaultTolerance)},
		{name: "from the future", secret: "k", header: func() http.Header { return signed("k", t2026) },
			now: t2026.Add(-DefaultTolerance - time.Second), err: ErrTimestampTooNew},
		{name: "a tolerance of its own", secret: "k", header: func() http.Header { return signed("k", t2026) },
			now: t2026.Add(time.Minute), tolerance: 30 * time.Second, err: ErrTimestampTooOld},
		{name: "no tolerance is the default", secret: "k", header: func() http.Header { return signed("k", t2026) },
			now: t2026.Add(4 * time.Minute), tolerance: -1},
		{name: "no signature", secret: "k", header: func() http.Header {
			h := signed("k", t2026)
			h.Del(HeaderWebhookSignature)
			return h
		}, err: ErrMissingHeaders},
		{name: "no id", secret: "k", header: func() http.Header {
			h := signed("k", t2026)
			h.Del(HeaderWebhookID)
			return h
		}, err: ErrMissingHeaders},
		{name: "timestamp not a number", secret: "k", header: func() http.Header {
			h := signed("k", t2026)
			h.Set(HeaderWebhookTimestamp, "2026-01-01T00:00:00Z")
			return h
		}, err: ErrInvalidTimestamp},
		{name: "invalid whsec_ secret", secret: "whsec_???", header: func() http.Header { return signed("k", t2026) }, err: ErrInvalidSecret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.body == "" {
				tt.body = string(body)
			}
			if tt.now.IsZero() {
				tt.now = t2026
			}
			err := Verify(tt.secret, tt.header(), []byte(tt.body), tt.now, tt.tolerance)
			if tt.err == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.err)
		})
	}
}

// referenceVerifier is the Standard Webhooks reference library set up the
// way a receiver does for secret: a "whsec_" secret as it is, a raw one as
// its bytes (the library's NewWebhook base64-decodes every secret).
func referenceVerifier(t *testing.T, secret string) *standardwebhooks.Webhook {
	t.Helper()
	var (
		wh  *standardwebhooks.Webhook
		err error
	)
	if strings.HasPrefix(secret, SecretPrefix) {
		wh, err = standardwebhooks.NewWebhook(secret)
	} else {
		wh, err = standardwebhooks.NewWebhookRaw([]byte(secret))
	}
	require.NoError(t, err)
	return wh
}

// TestReferenceLibraryVerifiesDeliveries: what the Sender puts on the wire
// passes the Standard Webhooks reference library, which also refuses a
// replay past its tolerance (5 minutes, on its own clock: the real one) and
// any tampering.
func TestReferenceLibraryVerifiesDeliveries(t *testing.T) {
	rcv := testkit.NewReceiver(t, testkit.OK)
	s := NewSender(loopback, time.Second, "test/1")
	for _, sc := range []struct{ name, secret string }{{"raw secret", "s3cret"}, {"whsec_ secret", whsecSecret}} {
		secret := sc.secret
		key, err := ParseSecret([]byte(secret))
		require.NoError(t, err)
		wh := referenceVerifier(t, secret)
		deliver := func(t *testing.T, at time.Time) testkit.Got {
			t.Helper()
			before := len(rcv.Requests())
			res := s.Send(context.Background(), Request{URL: rcv.URL, Body: []byte(`{"phase":"Succeeded"}`),
				IdempotencyKey: "uid-1/completion", Timestamp: at, Key: key})
			require.True(t, res.Delivered(), "%v", res.Err)
			got := rcv.Requests()
			require.Len(t, got, before+1)
			return got[before]
		}
		t.Run(sc.name, func(t *testing.T) {
			now := time.Now()
			got := deliver(t, now)
			require.NoError(t, wh.Verify(got.Body, got.Header), "the reference library verifies our delivery")
			require.NoError(t, Verify(secret, got.Header, got.Body, now, DefaultTolerance), "and so does ours")
			assert.Equal(t, got.Header.Get(HeaderIdempotencyKey), got.Header.Get(HeaderWebhookID))

			tests := []struct {
				name   string
				tamper func(h http.Header, body []byte) (http.Header, []byte)
				err    error
			}{
				{"body", func(h http.Header, _ []byte) (http.Header, []byte) { return h, []byte(`{"phase":"Failed"}`) },
					standardwebhooks.ErrNoMatchingSignature},
				{"id", func(h http.Header, b []byte) (http.Header, []byte) {
					h.Set(HeaderWebhookID, "uid-2/completion")
					return h, b
				}, standardwebhooks.ErrNoMatchingSignature},
				{"timestamp", func(h http.Header, b []byte) (http.Header, []byte) {
					h.Set(HeaderWebhookTimestamp, strconv.FormatInt(now.Unix()+1, 10))
					return h, b
				}, standardwebhooks.ErrNoMatchingSignature},
			}
			for _, tt := range tests {
				t.Run("tampered "+tt.name, func(t *testing.T) {
					h, b := tt.tamper(got.Header.Clone(), append([]byte(nil), got.Body...))
					assert.ErrorIs(t, wh.Verify(b, h), tt.err)
					assert.ErrorIs(t, Verify(secret, h, b, now, DefaultTolerance), ErrNoMatchingSignature)
				})
			}

			// A delivery captured 6 minutes ago and replayed now, and one
			// dated 6 minutes ahead: the signature is valid, the time is not.
			for _, tc := range []struct {
				name   string
				offset time.Duration
				err    error
			}{
				{"replayed 6 minutes later", -6 * time.Minute, standardwebhooks.ErrMessageTooOld},
				{"dated 6 minutes ahead", 6 * time.Minute, standardwebhooks.ErrMessageTooNew},
			} {
				t.Run(tc.name, func(t *testing.T) {
					old := deliver(t, now.Add(tc.offset))
					require.NoError(t, wh.VerifyIgnoringTimestamp(old.Body, old.Header), "genuine")
					assert.ErrorIs(t, wh.Verify(old.Body, old.Header), tc.err)
				})
			}
		})
	}
}

// TestServiceRetryKeepsIDNewTimestamp: every attempt of one delivery has the
// same webhook-id (the idempotency key) and its own webhook-timestamp, from
// the service's clock, under its own signature.
func TestServiceRetryKeepsIDNewTimestamp(t *testing.T) {
	rcv := testkit.NewReceiver(t, testkit.FailFirst(1, http.StatusServiceUnavailable))
	subject := newMemSubject()
	subject.add("retry", rcv.URL)
	subject.items["retry"].SecretRef = &v1alpha1.SecretKeyReference{Name: "hook", Key: "k"}
	subject.items["retry"].IdempotencyKey = "uid-retry/completion"
	s := testService(subject, Config{Policy: DefaultPolicy, Timeout: time.Second, Workers: 1, MaxPerHost: 1, Guard: loopback})
	s.opts.Secrets = secretReader{data: map[string][]byte{"k": []byte(whsecSecret)}, labels: map[string]string{labelkeys.Shared: labelkeys.SharedValue}}
	// Near the real time: the reference library checks against its own clock.
	clock := time.Now().Add(-time.Minute).Truncate(time.Second)
	s.opts.Now = func() time.Time { return clock }

	first := clock
	_, err := s.attempt(t.Context(), key("retry"))
	require.NoError(t, err)
	require.Equal(t, int32(1), subject.items["retry"].State.Attempts)
	clock = clock.Add(20 * time.Second) // past the 5 s backoff
	_, err = s.attempt(t.Context(), key("retry"))
	require.NoError(t, err)
	require.True(t, subject.items["retry"].State.Delivered)

	got := rcv.Requests()
	require.Len(t, got, 2)
	wh := referenceVerifier(t, whsecSecret)
	for i, at := range []time.Time{first, clock} {
		h := got[i].Header
		assert.Equal(t, "uid-retry/completion", h.Get(HeaderWebhookID), "attempt %d", i+1)
		assert.Equal(t, "uid-retry/completion", h.Get(HeaderIdempotencyKey), "attempt %d", i+1)
		assert.Equal(t, strconv.FormatInt(at.Unix(), 10), h.Get(HeaderWebhookTimestamp), "attempt %d: its own time", i+1)
		assert.NoError(t, wh.Verify(got[i].Body, h), "attempt %d", i+1)
	}
	assert.Equal(t, got[0].Body, got[1].Body)
	assert.NotEqual(t, got[0].Header.Get(HeaderWebhookSignature), got[1].Header.Get(HeaderWebhookSignature), "signed per attempt")
}

// TestServiceInvalidWhsecSecret: a "whsec_" value that is not base64 fails
// the attempt like an empty key: nothing is sent, and the reason, in status
// and the Event, names the Secret and its key, never the value.
func TestServiceInvalidWhsecSecret(t *testing.T) {
	const value = "whsec_Hunter2-is-not-base64!"
	rcv := testkit.NewReceiver(t, testkit.OK)
	subject := newMemSubject()
	subject.add("bad", rcv.URL)
	subject.items["bad"].SecretRef = &v1alpha1.SecretKeyReference{Name: "hook", Key: "k"}
	s := testService(subject, Config{Policy: DefaultPolicy, Timeout: time.Second, Workers: 1, MaxPerHost: 1, Guard: loopback})
	s.opts.Secrets = secretReader{data: map[string][]byte{"k": []byte(value)}, labels: map[string]string{labelkeys.Shared: labelkeys.SharedValue}}
	before := testutil.ToFloat64(Deliveries("Test", "secret"))
	_, err := s.attempt(t.Context(), key("bad"))
	require.NoError(t, err)

	st := subject.items["bad"].State
	require.NotNil(t, st)
	assert.Equal(t, int32(1), st.Attempts)
	assert.False(t, st.Delivered)
	assert.False(t, st.GaveUp, "fixing the Secret heals the next attempt")
	assert.Equal(t, `webhook signing secret unusable: key "k" of webhook secret ns/hook is not valid base64 after whsec_`, st.LastError)
	assert.Empty(t, rcv.Requests(), "never sent unsigned")
	assert.Equal(t, 1.0, testutil.ToFloat64(Deliveries("Test", "secret"))-before, "counted as a secret failure")

	note := <-s.opts.Recorder.(*events.FakeRecorder).Events
	assert.Contains(t, note, "not valid base64 after whsec_")
	for _, part := range []string{value, strings.TrimPrefix(value, SecretPrefix), "Hunter2"} {
		assert.NotContains(t, st.LastError, part)
		assert.NotContains(t, note, part)
	}
}
