// Package deploytest runs the deployments manager binary's command in-process
// against a test control plane, behind a proxy that counts the manager's
// write requests.
package deploytest

import (
	"context"
	"errors"
	"fmt"
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
	"k8s.io/client-go/rest"

	"opsnorth.io/scheduler/cmd/deployments/app"
	"opsnorth.io/scheduler/pkg/manager"
)

// Domain is the deployment domain the managers run with.
const Domain = "apps.example.com"

// Manager is a running deployments manager.
type Manager struct {
	mu     sync.Mutex
	writes []string
	cancel context.CancelFunc
	done   chan error
	proxy  *httptest.Server
}

// Start runs the deployments command (the binary's main) against cfg,
// reconciling only UserDeployments of watchNamespace, with extra flags.
// It stops when the test ends.
func Start(t *testing.T, cfg *rest.Config, watchNamespace string, extra ...string) *Manager {
	t.Helper()
	m := &Manager{done: make(chan error, 1)}
	upstream, err := url.Parse(cfg.Host)
	require.NoError(t, err)
	transport, err := rest.TransportFor(cfg)
	require.NoError(t, err)
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(upstream) },
		Transport:     transport,
		FlushInterval: -1,
	}
	m.proxy = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && !strings.Contains(r.URL.Path, "/events") {
			m.mu.Lock()
			m.writes = append(m.writes, r.Method+" "+r.URL.Path)
			m.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: %q}}]
contexts: [{name: test, context: {cluster: test, user: test}}]
current-context: test
users: [{name: test, user: {}}]
`, m.proxy.URL)), 0o600))

	args := append([]string{
		"--kubeconfig=" + kubeconfig, "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--leader-elect=false", "--deployment-domain=" + Domain, "--watch-namespace=" + watchNamespace,
		"--graceful-shutdown-timeout=5s",
	}, extra...)
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	// The run function is manager.Run with the binary's own component; its
	// Setup only also reports that Run got that far, i.e. past setting the
	// process-wide loggers, so tests do not race with that.
	setUp := make(chan struct{})
	cmd := app.NewCommand(manager.WithRunFunc(func(ctx context.Context, opts manager.Options, c manager.Component) error {
		setup := c.Setup
		c.Setup = func(ctx context.Context, deps *manager.Deps) error {
			defer close(setUp)
			return setup(ctx, deps)
		}
		return manager.Run(ctx, opts, c)
	}))
	cmd.SetArgs(args)
	go func() { m.done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(m.Stop)
	select {
	case <-setUp:
	case err := <-m.done:
		t.Fatalf("deployments manager exited before setup: %v", err)
	case <-time.After(wait):
		t.Fatal("deployments manager did not reach setup")
	}
	return m
}

const wait = time.Minute

// Stop stops the manager and waits for it to exit.
func (m *Manager) Stop() {
	if m.cancel == nil {
		return
	}
	m.cancel()
	m.cancel = nil
	select {
	case err := <-m.done:
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(os.Stderr, "deployments manager: %v\n", err)
		}
	case <-time.After(30 * time.Second):
		fmt.Fprintln(os.Stderr, "deployments manager did not stop in 30s")
	}
	m.proxy.Close()
}

// Writes returns the write requests (method and path, events excluded) so far.
func (m *Manager) Writes() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.writes...)
}

// ResetWrites forgets the writes counted so far.
func (m *Manager) ResetWrites() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes = nil
}
