// Package testenv starts a real control plane (etcd + kube-apiserver built by
// scripts/controlplane.sh) for integration tests, installs the scheduler CRDs
// and the third-party CRDs the managers create objects of, and hands tests a
// rest.Config. Start it once per test package from TestMain: a start costs
// seconds, a test should not.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"opsnorth.io/scheduler/pkg/localcluster"
	"opsnorth.io/scheduler/pkg/repo"
)

// Env is a running control plane.
type Env struct {
	// Config authenticates as a cluster admin.
	Config *rest.Config
	// RepoRoot is the repository's root directory.
	RepoRoot string

	env *envtest.Environment
}

// Option changes what Start installs.
type Option func(*options)

type options struct{ withoutThirdParty bool }

// WithoutThirdPartyCRDs installs only the scheduler CRDs: a cluster without
// Traefik, External Secrets or prometheus-operator. Starting that way beats
// deleting the CRDs in a test, which a loaded machine once took over three
// minutes to finish.
func WithoutThirdPartyCRDs() Option { return func(o *options) { o.withoutThirdParty = true } }

// Start builds the control-plane binaries if they are not cached yet, starts
// etcd and kube-apiserver, and installs every CRD (see Option). Stop it when done.
func Start(opts ...Option) (*Env, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	bin, err := BinaryDir(root)
	if err != nil {
		return nil, err
	}
	crds := []string{filepath.Join(root, "manifests", "crd")}
	if !o.withoutThirdParty {
		crds = append(crds, filepath.Join(root, "manifests", "thirdparty"))
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    bin,
		CRDDirectoryPaths:        crds,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	env.ControlPlane.GetAPIServer().Configure().Append("enable-admission-plugins", localcluster.AdmissionPlugins)
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start control plane from %s: %w", bin, err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	return &Env{Config: cfg, RepoRoot: root, env: env}, nil
}

// Stop stops kube-apiserver and etcd and removes their data.
func (e *Env) Stop() error {
	if err := e.env.Stop(); err != nil {
		return fmt.Errorf("stop control plane: %w", err)
	}
	return nil
}

// KubeconfigFor writes a kubeconfig for a new user with the given groups
// (system:masters makes it an admin) and returns its path, in dir.
func (e *Env) KubeconfigFor(dir, user string, groups ...string) (string, error) {
	au, err := e.env.AddUser(envtest.User{Name: user, Groups: groups}, e.Config)
	if err != nil {
		return "", fmt.Errorf("add user %s: %w", user, err)
	}
	kc, err := au.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("kubeconfig for %s: %w", user, err)
	}
	path := filepath.Join(dir, user+".kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		return "", fmt.Errorf("write kubeconfig: %w", err)
	}
	return path, nil
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// BinaryDir returns the directory holding etcd and kube-apiserver:
// KUBEBUILDER_ASSETS when set, otherwise the cache of scripts/controlplane.sh,
// building the binaries first if they are missing (minutes, once per machine).
func BinaryDir(root string) (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	buildOnce.Do(func() {
		cmd := exec.Command(filepath.Join(root, "scripts", "controlplane.sh"), "build", "envtest")
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			buildErr = fmt.Errorf("build control plane (scripts/controlplane.sh build envtest): %w", err)
			return
		}
		binDir = strings.TrimSpace(string(out))
	})
	return binDir, buildErr
}

// RepoRoot finds the repository root (see repo.Root).
func RepoRoot() (string, error) { return repo.Root() }
