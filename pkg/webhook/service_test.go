package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testkit"
)

func TestGate(t *testing.T) {
	g := newGate(2)
	a1, a2, a3, a4 := item{host: "a", key: key("1")}, item{host: "a", key: key("2")}, item{host: "a", key: key("3")}, item{host: "a", key: key("4")}
	b1 := item{host: "b", key: key("1")}
	assert.True(t, g.acquire(a1))
	assert.True(t, g.acquire(a2))
	assert.False(t, g.acquire(a3), "host a is at its cap")
	assert.False(t, g.acquire(a3), "parked once")
	assert.False(t, g.acquire(a4))
	assert.True(t, g.acquire(b1), "another host has its own slots")
	assert.Equal(t, 2, g.parkedCount())

	next, ok := g.release("a")
	require.True(t, ok)
	assert.Equal(t, a3, next, "the oldest parked item gets the slot")
	assert.False(t, g.acquire(item{host: "a", key: key("5")}), "the slot passed to a3, not to a newcomer")
	assert.True(t, g.acquire(a3), "a3 takes the slot it was granted")
	next, _ = g.release("a")
	assert.Equal(t, a4, next)
	assert.True(t, g.acquire(a4))
	next, _ = g.release("a")
	assert.Equal(t, key("5"), next.key)
	assert.True(t, g.acquire(next))
	for range 2 {
		_, ok = g.release("a")
		assert.False(t, ok)
	}
	_, ok = g.release("b")
	assert.False(t, ok)
	assert.Empty(t, g.busy, "every slot freed")
	assert.Zero(t, g.parkedCount())
}

func TestHostOf(t *testing.T) {
	assert.Equal(t, "hooks.example.com:8443", hostOf("https://hooks.example.com:8443/x?y=1"))
	assert.Equal(t, "hooks.example.com", hostOf("https://user@hooks.example.com/x"))
}

// TestServiceBlackHoleHoldsOnlyItsHost: deliveries to a receiver that
// accepts connections and never answers hold at most MaxPerHost workers;
// deliveries to other receivers go out at once meanwhile.
func TestServiceBlackHoleHoldsOnlyItsHost(t *testing.T) {
	hole := testkit.BlackHole(t)
	good := testkit.NewReceiver(t, testkit.OK)
	subject := newMemSubject()
	for i := range 40 {
		subject.add(fmt.Sprintf("hole-%d", i), hole)
	}
	for i := range 10 {
		subject.add(fmt.Sprintf("good-%d", i), good.URL)
	}
	s := testService(subject, Config{
		Policy: Policy{MaxAttempts: 1, BaseDelay: time.Second, MaxDelay: time.Second}, Timeout: 5 * time.Second,
		Workers: 4, MaxPerHost: 2, Guard: loopback,
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = s.Start(ctx); close(done) }()
	start := time.Now()
	for _, name := range subject.names() {
		s.Schedule(key(name), subject.url(name), nil)
	}
	delivered := func() int { return subject.count(func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered }) }
	require.Eventually(t, func() bool { return delivered() == 10 }, 4*time.Second, 10*time.Millisecond,
		"good deliveries while the black hole holds its slots")
	assert.Less(t, time.Since(start), 4*time.Second, "within one black-hole timeout")
	assert.Len(t, good.Requests(), 10)
	assert.Equal(t, 2, s.gate.inFlight(hostOf(hole)), "the black hole holds only its cap")
	cancel()
	<-done
}

func TestServiceSecret(t *testing.T) {
	rcv := testkit.NewReceiver(t, testkit.OK)
	shared := map[string]string{labelkeys.Shared: labelkeys.SharedValue}
	tests := []struct {
		name    string
		secrets secretReader
		want    string // LastError; "" for a signed delivery
	}{
		{name: "signed", secrets: secretReader{data: map[string][]byte{"k": []byte("v")}, labels: shared}},
		{name: "signed with a whsec_ secret", secrets: secretReader{data: map[string][]byte{"k": []byte(whsecSecret)}, labels: shared}},
		{name: "the user's own", secrets: secretReader{data: map[string][]byte{"k": []byte("v")}, labels: map[string]string{labelkeys.User: "alice"}}},
		{name: "another user's", secrets: secretReader{data: map[string][]byte{"k": []byte("v")}, labels: map[string]string{labelkeys.User: "bob"}},
			want: "spec.webhookSecretRef: not allowed for this user: Secret ns/hook is labelled neither scheduler.opsnorth.io/user=alice nor scheduler.opsnorth.io/shared=true"},
		{name: "unlabelled", secrets: secretReader{data: map[string][]byte{"k": []byte("v")}}, want: "not allowed for this user"},
		{name: "missing secret", secrets: secretReader{err: apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "hook")},
			want: `read webhook secret ns/hook: secrets "hook" not found`},
		{name: "forbidden", secrets: secretReader{err: apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "hook", errors.New("no"))},
			want: "forbidden"},
		{name: "missing key", secrets: secretReader{data: map[string][]byte{"other": []byte("v")}, labels: shared}, want: `webhook secret ns/hook has no key "k"`},
		{name: "empty key", secrets: secretReader{data: map[string][]byte{"k": {}}, labels: shared}, want: `key "k" of webhook secret ns/hook is empty`},
		{name: "whsec_ not base64", secrets: secretReader{data: map[string][]byte{"k": []byte("whsec_%%%")}, labels: shared},
			want: `key "k" of webhook secret ns/hook is not valid base64 after whsec_`},
		{name: "whsec_ alone", secrets: secretReader{data: map[string][]byte{"k": []byte("whsec_")}, labels: shared},
			want: `key "k" of webhook secret ns/hook is empty after whsec_`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			subject := newMemSubject()
			subject.add(tt.name, rcv.URL)
			subject.items[tt.name].SecretRef = &v1alpha1.SecretKeyReference{Name: "hook", Key: "k"}
			subject.items[tt.name].UserID = "alice"
			s := testService(subject, Config{Policy: DefaultPolicy, Timeout: time.Second, Workers: 1, MaxPerHost: 1, Guard: loopback})
			s.opts.Secrets = tt.secrets
			before := len(rcv.Requests())
			_, err := s.attempt(t.Context(), key(tt.name))
			require.NoError(t, err)
			st := subject.items[tt.name].State
			require.NotNil(t, st)
			assert.Equal(t, int32(1), st.Attempts)
			if tt.want == "" {
				assert.True(t, st.Delivered)
				got := rcv.Requests()[before:]
				require.Len(t, got, 1)
				secret := string(tt.secrets.data["k"])
				assert.NoError(t, Verify(secret, got[0].Header, got[0].Body, time.Now(), DefaultTolerance))
				assert.NoError(t, referenceVerifier(t, secret).Verify(got[0].Body, got[0].Header), "Standard Webhooks reference library")
				return
			}
			assert.False(t, st.Delivered)
			assert.Contains(t, st.LastError, tt.want)
			assert.Len(t, rcv.Requests(), before, "never sent unsigned")
		})
	}
}

func TestServiceTransientSecretErrorIsNoAttempt(t *testing.T) {
	subject := newMemSubject()
	subject.add("x", "http://127.0.0.1:1/")
	subject.items["x"].SecretRef = &v1alpha1.SecretKeyReference{Name: "hook", Key: "k"}
	s := testService(subject, Config{Policy: DefaultPolicy, Timeout: time.Second, Workers: 1, MaxPerHost: 1, Guard: loopback})
	s.opts.Secrets = secretReader{err: apierrors.NewServiceUnavailable("etcd down")}
	_, err := s.attempt(t.Context(), key("x"))
	require.Error(t, err, "retried by the queue")
	assert.Nil(t, subject.items["x"].State, "not recorded as an attempt")
}

var loopback = Guard{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}

func key(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }

func testService(subject Subject, cfg Config) *Service {
	cfg.UserAgent = "test"
	return NewService(Options{
		Config: cfg, Kind: "Test", Event: "test.completed",
		Recorder: events.NewFakeRecorder(1000), Subject: subject, Secrets: secretReader{},
	})
}

// memSubject keeps deliveries in memory: the pure unit tests' stand-in for
// a kind (the conformance suite runs the real ones on the API server).
type memSubject struct {
	mu    sync.Mutex
	items map[string]*Delivery
}

func newMemSubject() *memSubject { return &memSubject{items: map[string]*Delivery{}} }

func (m *memSubject) add(name, url string) {
	m.items[name] = &Delivery{
		Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}},
		URL:    url, Body: []byte(`{}`), IdempotencyKey: name,
	}
}

func (m *memSubject) names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.items))
	for n := range m.items {
		out = append(out, n)
	}
	return out
}

func (m *memSubject) url(name string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.items[name].URL
}

func (m *memSubject) count(match func(*v1alpha1.WebhookDelivery) bool) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, d := range m.items {
		if d.State != nil && match(d.State) {
			n++
		}
	}
	return n
}

func (m *memSubject) Load(_ context.Context, key types.NamespacedName) (*Delivery, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.items[key.Name]
	if !ok || !Pending(d.State) {
		return nil, nil
	}
	cp := *d
	return &cp, nil
}

func (m *memSubject) Record(_ context.Context, d *Delivery, state *v1alpha1.WebhookDelivery) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.items[d.Object.GetName()].State = state
	return nil
}

// secretReader answers every Secret GET with data or err.
type secretReader struct {
	data   map[string][]byte
	labels map[string]string
	err    error
}

func (r secretReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if r.err != nil {
		return r.err
	}
	s := obj.(*corev1.Secret)
	s.Name, s.Namespace, s.Data, s.Labels = key.Name, key.Namespace, r.data, r.labels
	return nil
}

func (secretReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("not supported")
}
