package helm

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Paths from this module's directory to what it tests.
var (
	repoRoot   = filepath.Join("..", "..")
	chartDir   = filepath.Join(repoRoot, "manifests", "charts", "opsnorth-scheduler")
	allInOne   = filepath.Join(repoRoot, "kustomize", "overlays", "all-in-one")
	cluster    = filepath.Join(repoRoot, "kustomize", "overlays", "cluster")
	monitoring = filepath.Join(repoRoot, "kustomize", "components", "monitoring")
	thirdParty = filepath.Join(repoRoot, "manifests", "thirdparty")
)

// apiServer is the package's kube-apiserver (with etcd), started by TestMain;
// nil under -short.
var apiServer *rest.Config

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	env, err := startAPIServer()
	if err != nil {
		fmt.Fprintf(os.Stderr, "helm tests: %v\n", err)
		os.Exit(1)
	}
	apiServer = env.Config
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "helm tests: stop the control plane: %v\n", err)
	}
	os.Exit(code)
}

// startAPIServer starts etcd and kube-apiserver from KUBEBUILDER_ASSETS (`make
// test` sets it), or else from the control plane scripts/controlplane.sh has
// cached, with the third-party CRDs the chart's optional objects need
// (prometheus-operator's ServiceMonitor).
func startAPIServer() (*envtest.Environment, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		out, err := exec.Command(filepath.Join(repoRoot, "scripts", "controlplane.sh"), "build", "envtest").Output()
		if err != nil {
			return nil, fmt.Errorf("scripts/controlplane.sh build envtest: %w", err)
		}
		assets = strings.TrimSpace(string(out))
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDInstallOptions: envtest.CRDInstallOptions{
			Paths:              []string{filepath.Join(thirdParty, "monitoring.coreos.com_servicemonitors.yaml")},
			ErrorIfPathMissing: true,
		},
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	if _, err := env.Start(); err != nil {
		return nil, fmt.Errorf("start kube-apiserver and etcd from %s: %w", assets, err)
	}
	return env, nil
}

// requireAPIServer returns the package's API server, or skips under -short.
func requireAPIServer(t *testing.T) *rest.Config {
	t.Helper()
	if apiServer == nil {
		t.Skip("needs kube-apiserver (run without -short)")
	}
	return apiServer
}
