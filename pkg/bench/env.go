package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/pkg/localcluster"
)

// TaskNamespace is where the suite's tasks and workflows managers work.
const TaskNamespace = "agent-tasks"

// BaselineNamespace holds the baseline's plain Jobs, out of the managers' sight.
const BaselineNamespace = "bench-baseline"

// RunLabel marks every object the harness creates with the run's id.
const RunLabel = "bench.opsnorth.io/run"

// Env is a local cluster with the three managers running as their
// ServiceAccounts, and fast admin clients for the load generator.
type Env struct {
	Cluster   *localcluster.Cluster
	Kube      kubernetes.Interface
	Sched     versioned.Interface
	Bins      map[string]string
	Managers  map[string]*localcluster.Manager
	ExtraArgs []string
	restarts  int
	retired   map[*localcluster.Process]bool
}

// NewEnv installs the CRDs and RBAC on c, builds the managers and starts one
// of each. Leader election is off (one replica each), so every write a
// manager counts is its controllers' own; extraArgs go to every manager.
func NewEnv(ctx context.Context, c *localcluster.Cluster, extraArgs []string) (*Env, error) {
	root, err := localcluster.RepoRoot()
	if err != nil {
		return nil, err
	}
	files, err := localcluster.ManifestFiles(
		filepath.Join(root, "manifests", "crd", "*.yaml"),
		filepath.Join(root, "manifests", "thirdparty", "*.yaml"),
	)
	if err != nil {
		return nil, err
	}
	if _, err := c.Apply(ctx, files...); err != nil {
		return nil, fmt.Errorf("install CRDs: %w", err)
	}
	if _, err := c.InstallRBAC(ctx, root); err != nil {
		return nil, err
	}
	bins, err := localcluster.BuildManagers(ctx, root, filepath.Join(c.Dir, "bin"))
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(c.Config)
	// The load generator must never be the bottleneck of what it measures.
	cfg.QPS, cfg.Burst = 2000, 4000
	e := &Env{Cluster: c, Bins: bins, Managers: map[string]*localcluster.Manager{}, retired: map[*localcluster.Process]bool{}, ExtraArgs: extraArgs}
	if e.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if e.Sched, err = versioned.NewForConfig(cfg); err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: BaselineNamespace}}
	if _, err := e.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s: %w", BaselineNamespace, err)
	}
	for _, comp := range localcluster.Components {
		if _, err := e.start(ctx, comp, comp); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func (e *Env) start(ctx context.Context, name, comp string) (*localcluster.Manager, error) {
	args := append([]string{"--leader-elect=false"}, e.ExtraArgs...)
	m, err := e.Cluster.StartManager(ctx, name, comp, e.Bins[comp], args...)
	if err != nil {
		return nil, fmt.Errorf("start %s manager: %w", comp, err)
	}
	e.Managers[comp] = m
	return m, nil
}

// Restart stops comp's manager (SIGTERM to the process group the harness
// started, then waits for it to exit) and starts a fresh process in its place.
func (e *Env) Restart(ctx context.Context, comp string) (*localcluster.Manager, error) {
	old := e.Managers[comp]
	if err := syscall.Kill(-old.Process.PID(), syscall.SIGTERM); err != nil {
		return nil, fmt.Errorf("stop %s: %w", old.Process.Name, err)
	}
	deadline := time.Now().Add(45 * time.Second)
	for !old.Process.Exited() {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s did not exit within 45s of SIGTERM", old.Process.Name)
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.restarts++
	e.retired[old.Process] = true
	return e.start(ctx, fmt.Sprintf("%s-restart-%d", comp, e.restarts), comp)
}

// CheckAlive fails when a control-plane or current manager process has died.
func (e *Env) CheckAlive() error {
	for _, p := range e.Cluster.Processes() {
		if p.Exited() && !e.retired[p] {
			return fmt.Errorf("%s %s; see %s", p.Name, p.State(), p.LogPath)
		}
	}
	return nil
}
