package integration

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"opsnorth.io/scheduler/pkg/testenv"
)

// TestManagerBinaries builds each manager binary, starts it against the real
// apiserver and checks what an operator of the suite relies on: it wins its
// own leader-election Lease, serves /healthz, /readyz and /metrics, and on
// SIGTERM exits 0 and releases the Lease for a standby to take over at once.
func TestManagerBinaries(t *testing.T) {
	env := testenv.Require(t)
	kube, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	binDir := t.TempDir()

	tests := []struct {
		component string
		leaseID   string
		flags     []string
	}{
		{component: "deployments", leaseID: "deployments.scheduler.opsnorth.io", flags: []string{"--deployment-domain=apps.example.test"}},
		{component: "tasks", leaseID: "tasks.scheduler.opsnorth.io", flags: []string{"--watch-namespace=default"}},
		{component: "workflows", leaseID: "workflows.scheduler.opsnorth.io", flags: []string{"--watch-namespace=default"}},
	}
	for _, tt := range tests {
		t.Run(tt.component, func(t *testing.T) {
			bin := buildBinary(t, env.RepoRoot, binDir, tt.component)
			kubeconfig, err := env.KubeconfigFor(t.TempDir(), "manager-"+tt.component, "system:masters")
			require.NoError(t, err)
			metricsAddr, healthAddr := freeAddr(t), freeAddr(t)
			args := append([]string{
				"--kubeconfig=" + kubeconfig,
				"--leader-election-namespace=default",
				"--metrics-bind-address=" + metricsAddr,
				"--health-probe-bind-address=" + healthAddr,
			}, tt.flags...)
			cmd := exec.Command(bin, args...)
			logs := &strings.Builder{}
			cmd.Stdout, cmd.Stderr = logs, logs
			require.NoError(t, cmd.Start())
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				if t.Failed() {
					t.Logf("%s output:\n%s", tt.component, logs.String())
				}
			})

			ctx := context.Background()
			require.Eventually(t, func() bool {
				lease, err := kube.CoordinationV1().Leases("default").Get(ctx, tt.leaseID, metav1.GetOptions{})
				return err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != ""
			}, 60*time.Second, 200*time.Millisecond, "lease %s not acquired", tt.leaseID)

			for _, path := range []string{"/healthz", "/readyz"} {
				assert.Eventually(t, func() bool { return httpStatus("http://"+healthAddr+path) == http.StatusOK },
					30*time.Second, 100*time.Millisecond, "%s not OK", path)
			}
			metrics := httpBody(t, "http://"+metricsAddr+"/metrics")
			assert.Contains(t, metrics, fmt.Sprintf(`leader_election_master_status{name="%s"} 1`, tt.leaseID))

			require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
			select {
			case err := <-exited:
				require.NoError(t, err, "manager did not exit cleanly")
			case <-time.After(45 * time.Second):
				t.Fatal("manager did not stop within 45s of SIGTERM")
			}
			lease, err := kube.CoordinationV1().Leases("default").Get(ctx, tt.leaseID, metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				require.NoError(t, err)
				assert.True(t, lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "",
					"lease still held after shutdown: %v", lease.Spec.HolderIdentity)
			}
		})
	}
}

func buildBinary(t *testing.T, root, dir, component string) string {
	t.Helper()
	out := filepath.Join(dir, component)
	cmd := exec.Command("go", "build", "-o", out, "./cmd/"+component)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	output, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build %s: %s", component, output)
	return out
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

func httpStatus(url string) int {
	code, _, err := fetch(url)
	if err != nil {
		return 0
	}
	return code
}

func httpBody(t *testing.T, url string) string {
	t.Helper()
	code, body, err := fetch(url)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	return body
}

// fetch GETs url with a timeout and returns the status and the whole body.
func fetch(url string) (int, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}
