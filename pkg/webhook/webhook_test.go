package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func TestGuardCheck(t *testing.T) {
	allowed, err := ParseCIDRs([]string{"10.1.0.0/16", "127.0.0.1", "169.254.0.0/16", "fe80::/10", "168.63.129.16"})
	require.NoError(t, err)
	open := Guard{Allowed: allowed}
	tests := []struct {
		addr  string
		guard Guard
		class string // empty: allowed
	}{
		{"93.184.216.34", Guard{}, ""},
		{"2606:2800:220:1::1", Guard{}, ""},
		{"192.0.0.9", Guard{}, "IETF protocol assignments"},
		{"127.0.0.1", Guard{}, "loopback"},
		{"::1", Guard{}, "loopback"},
		{"::ffff:127.0.0.1", Guard{}, "loopback"},
		{"10.0.0.1", Guard{}, "private"},
		{"172.16.5.4", Guard{}, "private"},
		{"192.168.1.1", Guard{}, "private"},
		{"169.254.169.254", Guard{}, "cloud metadata"},
		{"169.254.1.1", Guard{}, "link-local"},
		{"168.63.129.16", Guard{}, "cloud metadata"},
		{"100.100.100.200", Guard{}, "cloud metadata"},
		{"fd00:ec2::254", Guard{}, "cloud metadata"},
		{"fe80::1", Guard{}, "link-local"},
		{"fd00::1", Guard{}, "unique-local (private)"},
		{"100.64.0.1", Guard{}, "shared (carrier-grade NAT)"},
		{"0.0.0.0", Guard{}, "this-network"},
		{"0.1.2.3", Guard{}, "this-network"},
		{"224.0.0.1", Guard{}, "multicast"},
		{"ff02::1", Guard{}, "multicast"},
		{"192.0.0.1", Guard{}, "IETF protocol assignments"},
		{"192.0.2.1", Guard{}, "documentation"},
		{"198.51.100.7", Guard{}, "documentation"},
		{"203.0.113.9", Guard{}, "documentation"},
		{"198.18.0.1", Guard{}, "benchmarking"},
		{"198.19.255.255", Guard{}, "benchmarking"},
		{"240.0.0.1", Guard{}, "reserved"},
		{"255.255.255.255", Guard{}, "reserved"},
		{"192.88.99.1", Guard{}, "6to4 relay anycast"},
		{"2002:7f00:1::1", Guard{}, "6to4"},
		{"2001:0:4136:e378::1", Guard{}, "IETF protocol assignments"},
		{"2001:db8::1", Guard{}, "documentation"},
		{"3fff::1", Guard{}, "documentation"},
		{"64:ff9b:1::a", Guard{}, "local-use IPv4/IPv6 translation"},
		{"100::1", Guard{}, "discard-only"},
		{"5f00::1", Guard{}, "segment routing (SRv6)"},
		{"fec0::1", Guard{}, "site-local"},
		{"::", Guard{}, "unspecified"},
		{"64:ff9b::7f00:1", Guard{}, "loopback"},
		{"64:ff9b::a9fe:a9fe", Guard{}, "cloud metadata"},
		{"64:ff9b::5db8:d822", Guard{}, ""},
		{"::a9fe:a9fe", Guard{}, "cloud metadata"},        // IPv4-compatible
		{"::ffff:0:a9fe:a9fe", Guard{}, "cloud metadata"}, // IPv4-translated
		{"::ffff:a9fe:a9fe", Guard{}, "cloud metadata"},   // IPv4-mapped
		{"::7f00:1", Guard{}, "loopback"},
		{"::ffff:0:a00:1", Guard{}, "private"},
		{"::5db8:d822", Guard{}, ""},
		{"4000::1", Guard{}, "non-global IPv6"},
		{"192.31.196.1", Guard{}, "AS112"},
		{"2620:4f:8000::1", Guard{}, "AS112"},
		{"10.1.2.3", open, ""},
		{"10.2.0.1", open, "private"},
		{"127.0.0.1", open, ""},
		{"::ffff:127.0.0.1", open, ""},
		// A wide allowed CIDR never opens link-local or metadata addresses;
		// listing one exactly does.
		{"169.254.169.254", open, "cloud metadata"},
		{"169.254.1.1", open, "link-local"},
		{"fe80::1", open, "link-local"},
		{"168.63.129.16", open, ""},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			err := tt.guard.Check(netip.MustParseAddr(tt.addr))
			if tt.class == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrAddressRefused)
			assert.EqualError(t, err, "webhook address refused: the receiver resolved to a "+tt.class+" address")
			assert.NotContains(t, err.Error(), tt.addr)
		})
	}
}

func TestParseCIDRs(t *testing.T) {
	got, err := ParseCIDRs([]string{"10.1.2.3/16", "::1", "192.168.0.1", "::ffff:10.9.0.0/112"})
	require.NoError(t, err)
	assert.Equal(t, []netip.Prefix{
		netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("192.168.0.1/32"),
		netip.MustParsePrefix("10.9.0.0/16"),
	}, got)
	assert.NoError(t, Guard{Allowed: got}.Check(netip.MustParseAddr("10.9.1.1")), "a mapped entry allows the IPv4 address")
	_, err = ParseCIDRs([]string{"::ffff:0:0/80"})
	assert.ErrorContains(t, err, "96 bits")
	_, err = ParseCIDRs([]string{"example.com"})
	assert.ErrorContains(t, err, `"example.com"`)
}

// TestPolicyNeverRetriesEarly: status keeps lastAttemptTime to the second,
// so an attempt stored as t0 happened in [t0, t0+1s); the next may not start
// before t0+1s+delay.
func TestPolicyNeverRetriesEarly(t *testing.T) {
	p := Policy{MaxAttempts: 5, BaseDelay: 200 * time.Millisecond, MaxDelay: time.Second}
	t0 := time.Date(2026, 1, 1, 0, 0, 7, 0, time.UTC)
	stored := &v1alpha1.WebhookDelivery{Attempts: 1, LastAttemptTime: new(metav1.NewTime(t0))}
	assert.Equal(t, 700*time.Millisecond, p.Next(stored, t0.Add(500*time.Millisecond)))
	assert.Zero(t, p.Next(stored, t0.Add(1200*time.Millisecond)))
	assert.Equal(t, t0, stored.LastAttemptTime.Time, "the stored status is not modified")
}

func TestPolicy(t *testing.T) {
	p := Policy{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: 3 * time.Second}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	assert.Zero(t, p.Next(nil, now))
	assert.True(t, Pending(nil))

	st := p.Record(nil, Result{Err: errors.New("connection refused")}, now)
	assert.Equal(t, int32(1), st.Attempts)
	assert.Equal(t, "connection refused", st.LastError)
	assert.True(t, Pending(st))
	// Waits count from the end of the recorded second (now+1s).
	assert.Equal(t, 2*time.Second, p.Next(st, now))
	assert.Equal(t, 1500*time.Millisecond, p.Next(st, now.Add(500*time.Millisecond)))
	assert.Zero(t, p.Next(st, now.Add(2*time.Second)))

	st = p.Record(st, Result{StatusCode: 503, Err: errors.New("receiver answered 503")}, now)
	assert.Equal(t, 3*time.Second, p.Next(st, now), "doubles")
	assert.Equal(t, int32(503), st.LastStatusCode)
	st.Attempts = 5
	assert.Equal(t, 4*time.Second, p.Next(st, now), "capped")
	st.Attempts = 2

	gaveUp := p.Record(st, Result{Err: errors.New("timeout")}, now)
	assert.True(t, gaveUp.GaveUp)
	assert.False(t, Pending(gaveUp))

	delivered := p.Record(st, Result{StatusCode: 204}, now)
	assert.True(t, delivered.Delivered)
	assert.Empty(t, delivered.LastError)
	assert.False(t, Pending(delivered))
	assert.Equal(t, int32(2), st.Attempts, "Record does not modify its input")
	assert.Equal(t, metav1.NewTime(now), *delivered.LastAttemptTime)
}

func TestPolicyRefusedAddressGivesUpAtOnce(t *testing.T) {
	st := DefaultPolicy.Record(nil, Result{Err: fmt.Errorf("post webhook: %w", ErrAddressRefused)}, time.Now())
	assert.Equal(t, int32(1), st.Attempts)
	assert.True(t, st.GaveUp, "no retry changes where the receiver's name points")
	assert.False(t, Pending(st))
	st = DefaultPolicy.Record(nil, Result{Err: fmt.Errorf("%w: no key", ErrSecret)}, time.Now())
	assert.False(t, st.GaveUp, "a signing key can still be created")
}

func TestCondition(t *testing.T) {
	tests := []struct {
		d      *v1alpha1.WebhookDelivery
		status metav1.ConditionStatus
		reason string
	}{
		{nil, metav1.ConditionFalse, "Pending"},
		{&v1alpha1.WebhookDelivery{Attempts: 2, LastError: "x"}, metav1.ConditionFalse, "Retrying"},
		{&v1alpha1.WebhookDelivery{Attempts: 8, GaveUp: true}, metav1.ConditionFalse, "GaveUp"},
		{&v1alpha1.WebhookDelivery{Attempts: 1, Delivered: true, LastStatusCode: 204}, metav1.ConditionTrue, "Delivered"},
	}
	for _, tt := range tests {
		c := Condition(tt.d, 3)
		assert.Equal(t, ConditionDelivered, c.Type)
		assert.Equal(t, tt.status, c.Status, tt.reason)
		assert.Equal(t, tt.reason, c.Reason)
		assert.Equal(t, int64(3), c.ObservedGeneration)
	}
}

func TestRecordTruncatesOnRuneBoundary(t *testing.T) {
	msg := strings.Repeat("a", 1023) + "é" + strings.Repeat("b", 10)
	st := DefaultPolicy.Record(&v1alpha1.WebhookDelivery{}, Result{Err: errors.New(msg)}, time.Now())
	assert.Equal(t, strings.Repeat("a", 1023), st.LastError)
}

func TestSender(t *testing.T) {
	var (
		mu       sync.Mutex
		lastReq  *http.Request
		lastBody []byte
	)
	last := func() (*http.Request, []byte) {
		mu.Lock()
		defer mu.Unlock()
		return lastReq, lastBody
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lastReq, lastBody = r.Clone(context.Background()), must(io.ReadAll(r.Body))
		mu.Unlock()
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/slow":
			time.Sleep(2 * time.Second)
		case "/fail":
			http.Error(w, "secret internal detail", http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	loopback := Guard{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	s := NewSender(loopback, time.Second, "test/1")
	sent := time.Now().Truncate(time.Second)
	req := Request{
		URL: srv.URL + "/ok", Body: []byte(`{"a":"b"}`), IdempotencyKey: "uid/completion", Timestamp: sent,
		Event: "agenttask.completed", Key: []byte("k"),
	}

	res := s.Send(context.Background(), req)
	require.True(t, res.Delivered(), "%v", res.Err)
	assert.Equal(t, 200, res.StatusCode)
	got, body := last()
	assert.Equal(t, http.MethodPost, got.Method)
	assert.Equal(t, `{"a":"b"}`, string(body))
	assert.Equal(t, "uid/completion", got.Header.Get(HeaderIdempotencyKey))
	assert.Equal(t, "agenttask.completed", got.Header.Get(HeaderEvent))
	assert.Equal(t, "application/json", got.Header.Get("Content-Type"))
	assert.Equal(t, "test/1", got.Header.Get("User-Agent"))
	assert.Equal(t, "uid/completion", got.Header.Get(HeaderWebhookID), "webhook-id is the idempotency key")
	assert.Equal(t, strconv.FormatInt(sent.Unix(), 10), got.Header.Get(HeaderWebhookTimestamp))
	assert.Equal(t, Sign([]byte("k"), "uid/completion", sent, body), got.Header.Get(HeaderWebhookSignature))
	assert.NoError(t, Verify("k", got.Header, body, sent, DefaultTolerance))
	assert.Empty(t, got.Header.Get("X-Opsnorth-Signature"), "the old signature is gone")

	unsigned := req
	unsigned.Key = nil
	require.True(t, s.Send(context.Background(), unsigned).Delivered())
	got, _ = last()
	assert.Empty(t, got.Header.Values(HeaderWebhookSignature), "no key, no signature")
	assert.Equal(t, "uid/completion", got.Header.Get(HeaderWebhookID), "unsigned deliveries carry the id too")
	assert.NotEmpty(t, got.Header.Get(HeaderWebhookTimestamp))

	before, _ := last()
	undated := req
	undated.Timestamp = time.Time{}
	res = s.Send(context.Background(), undated)
	assert.EqualError(t, res.Err, "build request: no attempt timestamp")
	after, _ := last()
	assert.Same(t, before, after, "nothing is sent without the attempt's timestamp")

	req.URL = srv.URL + "/redirect"
	res = s.Send(context.Background(), req)
	assert.False(t, res.Delivered(), "redirects are not followed")
	assert.Equal(t, http.StatusFound, res.StatusCode)
	got, _ = last()
	assert.Equal(t, "/redirect", got.URL.Path)

	req.URL = srv.URL + "/fail"
	res = s.Send(context.Background(), req)
	assert.Equal(t, 500, res.StatusCode)
	assert.NotContains(t, res.Err.Error(), "secret internal detail", "the response body is never kept")

	req.URL = srv.URL + "/slow"
	start := time.Now()
	res = s.Send(context.Background(), req)
	assert.Error(t, res.Err)
	assert.Less(t, time.Since(start), 1900*time.Millisecond, "per-attempt timeout")

	time.Sleep(1500 * time.Millisecond) // let the slow handler finish
	before, _ = last()
	req.URL = srv.URL + "/ok"
	res = NewSender(Guard{}, time.Second, "test/1").Send(context.Background(), req)
	assert.ErrorIs(t, res.Err, ErrAddressRefused)
	assert.Zero(t, res.StatusCode)
	after, _ = last()
	assert.Same(t, before, after, "a refused address is never connected to")

	req.URL = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/ok"
	res = NewSender(Guard{}, time.Second, "test/1").Send(context.Background(), req)
	assert.ErrorIs(t, res.Err, ErrAddressRefused, "checked on the resolved address, not the name")
	assert.EqualError(t, res.Err, "webhook address refused: the receiver resolved to a loopback address",
		"the class is named, never the resolved address")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
