package testkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"opsnorth.io/scheduler/pkg/manager"
)

// Manager is one manager running in-process exactly as its binary runs it
// (flags → manager.Run → the component's Setup), talking to the API server
// through a proxy that logs its requests.
type Manager struct {
	Requests *RequestLog

	cancel context.CancelFunc
	done   chan error
	proxy  *httptest.Server
}

// startWait bounds how long a manager may take to reach its Setup.
const startWait = time.Minute

// StartManager runs the command of component c with args, as the identity
// of base (an admin, or a user from ManagerConfig), until Stop or the end of
// the test. Leader election and the metrics and probe servers are off unless
// args say otherwise. It returns once Setup ran, so the process-wide loggers
// are set.
func StartManager(t *testing.T, base *rest.Config, c manager.Component, args ...string) *Manager {
	t.Helper()
	ensureManagerNamespace(t, base)
	m := &Manager{Requests: &RequestLog{}, done: make(chan error, 1)}
	m.proxy = m.Requests.proxy(t, base)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: %q}}]
contexts: [{name: test, context: {cluster: test, user: test}}]
current-context: test
users: [{name: test, user: {}}]
`, m.proxy.URL)), 0o600))

	setUp := make(chan struct{})
	cmd := manager.NewCommand(c, manager.WithRunFunc(func(ctx context.Context, opts manager.Options, c manager.Component) error {
		setup := c.Setup
		c.Setup = func(ctx context.Context, deps *manager.Deps) error {
			defer close(setUp)
			return setup(ctx, deps)
		}
		return manager.Run(ctx, opts, c)
	}))
	cmd.SetArgs(append([]string{
		"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--leader-election-namespace=" + ManagerNamespace, "--metrics-bind-address=0",
		"--health-probe-bind-address=0", "--graceful-shutdown-timeout=5s", "--zap-log-level=error",
	}, args...))
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() { m.done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() { require.NoError(t, m.stop()) })
	select {
	case <-setUp:
	case err := <-m.done:
		t.Fatalf("%s manager exited before setup: %v", c.Name, err)
	case <-time.After(startWait):
		t.Fatalf("%s manager did not reach setup in %s", c.Name, startWait)
	}
	return m
}

// ensureManagerNamespace creates ManagerNamespace, where managers keep
// their own objects (the deployments manager's host claims), as base if it
// may; an identity that may not relies on ManagerConfig having created it.
func ensureManagerNamespace(t *testing.T, base *rest.Config) {
	t.Helper()
	kube, err := kubernetes.NewForConfig(base)
	require.NoError(t, err)
	_, err = kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ManagerNamespace}},
		metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
		require.NoError(t, err)
	}
}

// Stop stops the manager and waits until it returned; it fails the test if
// the manager ended with an error. Stopping twice is a no-op.
func (m *Manager) Stop(t *testing.T) {
	t.Helper()
	require.NoError(t, m.stop())
}

func (m *Manager) stop() error {
	if m.cancel == nil {
		return nil
	}
	m.cancel()
	m.cancel = nil
	defer m.proxy.Close()
	select {
	case err := <-m.done:
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	case <-time.After(30 * time.Second):
		return errors.New("manager did not stop in 30s")
	}
}

// Request is one answered request of a manager.
type Request struct {
	Method, Path string
	Code         int
}

// RequestLog records a manager's requests once answered; watches, which
// stay open, are not recorded.
type RequestLog struct {
	mu   sync.Mutex
	reqs []Request
}

// proxy serves the log's manager: it forwards to base's server with base's
// credentials and records each answered request.
func (l *RequestLog) proxy(t *testing.T, base *rest.Config) *httptest.Server {
	t.Helper()
	upstream, err := url.Parse(base.Host)
	require.NoError(t, err)
	transport, err := rest.TransportFor(base)
	require.NoError(t, err)
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(upstream) },
		Transport:     transport,
		FlushInterval: -1,
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		rp.ServeHTTP(rec, r)
		if r.URL.Query().Get("watch") != "true" {
			l.mu.Lock()
			l.reqs = append(l.reqs, Request{Method: r.Method, Path: r.URL.Path, Code: rec.code})
			l.mu.Unlock()
		}
	}))
}

// All returns the requests answered so far.
func (l *RequestLog) All() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Request(nil), l.reqs...)
}

// Writes returns "METHOD path" of each request that asked to change
// something (any method but GET), Events included.
func (l *RequestLog) Writes() []string {
	var out []string
	for _, r := range l.All() {
		if r.Method != http.MethodGet {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

// Count returns the successful (2xx) requests of method whose path holds
// each of parts.
func (l *RequestLog) Count(method string, parts ...string) int {
	n := 0
	for _, r := range l.All() {
		if r.Method == method && r.Code/100 == 2 && containsAll(r.Path, parts) {
			n++
		}
	}
	return n
}

// Reset forgets the requests recorded so far.
func (l *RequestLog) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = nil
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// statusRecorder remembers the status code written through it.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

// Flush lets watch events through as they come.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// ParseCommand runs the command of c with args as its binary would, up to
// the point where it would run the manager: flags, environment and
// validation. It returns the component the run function got, or nil when
// parsing or validation stopped it.
func ParseCommand(t *testing.T, c manager.Component, args ...string) (*manager.Component, error) {
	t.Helper()
	var got *manager.Component
	cmd := manager.NewCommand(c, manager.WithRunFunc(
		func(_ context.Context, _ manager.Options, c manager.Component) error { got = &c; return nil }))
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SetArgs(args)
	return got, cmd.Execute()
}

// ParseExpect parses args with c's command. With wantErr it requires an
// error containing it, and that the manager was not run, and returns nil;
// else it requires success and returns the component the manager ran.
func ParseExpect(t *testing.T, c manager.Component, wantErr string, args ...string) *manager.Component {
	t.Helper()
	got, err := ParseCommand(t, c, args...)
	if wantErr != "" {
		require.ErrorContains(t, err, wantErr)
		require.Nil(t, got, "the manager must not run")
		return nil
	}
	require.NoError(t, err)
	require.NotNil(t, got)
	return got
}

// HelpText is what the command of c prints for --help.
func HelpText(t *testing.T, c manager.Component) string {
	t.Helper()
	var out strings.Builder
	cmd := manager.NewCommand(c)
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	require.NoError(t, cmd.Execute())
	return out.String()
}
