// Package localcluster runs a real, complete Kubernetes cluster on the local
// machine from the binaries scripts/controlplane.sh builds: etcd,
// kube-apiserver, kube-controller-manager (every controller: Jobs,
// Deployments, garbage collection, ServiceAccount tokens), kube-scheduler and
// kwok, which plays the kubelet of a fake node so pods run, become ready and
// complete without containers, and a host-path volume provisioner behind the
// default StorageClass. Everything listens on 127.0.0.1 on free ports and
// lives in one directory; RBAC is enforced, so a program run with a
// ServiceAccount kubeconfig gets exactly that account's permissions.
package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"opsnorth.io/scheduler/pkg/localcluster/provisioner"
)

// apiTimeout bounds single API calls the cluster makes on its own behalf.
const apiTimeout = 30 * time.Second

// Options configure a local cluster. The zero value works from within the repository.
type Options struct {
	// Dir holds all state: PKI, kubeconfigs, etcd data, logs. Default: a new temporary directory.
	Dir string
	// Keep leaves Dir in place on Stop (for reading logs); otherwise Stop removes it.
	Keep bool
	// BinDir holds etcd, kube-apiserver, kube-controller-manager, kube-scheduler
	// and kwok. Default: the cache of scripts/controlplane.sh, built if missing.
	BinDir string
	// StagesDir holds the kwok Stage YAMLs. Default: scripts/kwok-stages of the repository.
	StagesDir string
	// PodDelay is how long a pod that exits (a Job's, or one naming an exit
	// code) runs when it names no kwok.opsnorth.io/delay. Zero keeps the
	// stages' own default (1s).
	PodDelay time.Duration
	// StartTimeout bounds Start. Default 3 minutes.
	StartTimeout time.Duration
	// StopTimeout is how long each process gets between SIGTERM and SIGKILL. Default 10s.
	StopTimeout time.Duration
	// Profiling serves kube-apiserver's /debug/pprof to cluster admins (off by default).
	Profiling bool
	// AuditPolicy, when set, is kube-apiserver's audit policy (audit.k8s.io/v1
	// YAML); the events it selects go as JSON lines to Cluster.AuditLog.
	AuditPolicy []byte
}

// Cluster is a running local cluster.
type Cluster struct {
	// Dir is the cluster's state directory.
	Dir string
	// AdminKubeconfig is the path of a kubeconfig for a cluster admin (system:masters).
	AdminKubeconfig string
	// Config authenticates as the admin.
	Config *rest.Config
	// Clientset and Dynamic are admin clients.
	Clientset kubernetes.Interface
	Dynamic   dynamic.Interface
	// StartedIn is how long Start took, to the node Ready.
	StartedIn time.Duration

	opts   Options
	layout layout
	pki    *pki

	started time.Time
	phases  []Phase

	mu    sync.Mutex
	procs []*Process
	// stops end the in-process components (the provisioner), each given
	// Options.StopTimeout; Stop calls them before it stops the processes.
	stops   []func(timeout time.Duration) error
	stopped bool
	// managerEnv is each packaged manager container's literal env, by
	// component, recorded by InstallRBAC.
	managerEnv map[string][]string
	// managerFiles are the ConfigMap files each one mounts (PackagedManager.Files).
	managerFiles map[string]map[string]string
}

// Phase is a step of Start and when, counted from the start, it was done.
type Phase struct {
	Name string
	At   time.Duration
}

// StartPhases tells where Start spent its time.
func (c *Cluster) StartPhases() []Phase { return slices.Clone(c.phases) }

func (c *Cluster) phaseDone(name string) {
	c.phases = append(c.phases, Phase{Name: name, At: time.Since(c.started)})
}

// Start brings up etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok, waits for each to be healthy, registers the kwok
// node NodeName and waits until pods can run on it (Ready, untainted), then
// installs the default StorageClass and starts its provisioner.
// On error everything started is stopped again and the state directory removed
// (unless Options.Keep).
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	opts, err := withDefaults(opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	c := &Cluster{opts: opts}
	if c.Dir, err = stateDir(opts.Dir); err != nil {
		return nil, err
	}
	if err := c.start(ctx); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	c.StartedIn = time.Since(c.started)
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	c.started = time.Now()
	var err error
	if c.layout, err = newLayout(c.Dir); err != nil {
		return err
	}
	if err := os.MkdirAll(c.layout.path("logs"), 0o700); err != nil {
		return fmt.Errorf("create log dir: %w", err)
	}
	if c.pki, err = newPKI(c.layout.path("pki"), kubernetesServiceIP, time.Now()); err != nil {
		return err
	}
	if err := writeComponentKubeconfigs(c.layout, c.pki); err != nil {
		return err
	}
	stages, err := loadStages(c.opts.StagesDir, c.opts.PodDelay)
	if err != nil {
		return err
	}
	stagesPath := c.layout.path("kwok", "stages.yaml")
	if err := os.MkdirAll(filepath.Dir(stagesPath), 0o700); err != nil {
		return fmt.Errorf("create kwok dir: %w", err)
	}
	if err := os.WriteFile(stagesPath, stages, 0o600); err != nil {
		return fmt.Errorf("write kwok stages: %w", err)
	}
	c.phaseDone("pki, kubeconfigs, stages written")
	if err := c.startControlPlane(ctx, stagesPath); err != nil {
		return err
	}
	if err := c.createNode(ctx, NodeName); err != nil {
		return err
	}
	c.phaseDone("node " + NodeName + " Ready and untainted")
	if err := c.startProvisioner(ctx); err != nil {
		return err
	}
	c.phaseDone("StorageClass " + provisioner.DefaultClassName + " and its provisioner")
	return nil
}

func (c *Cluster) startControlPlane(ctx context.Context, stagesPath string) error {
	etcd, err := c.StartProcess("etcd", c.bin("etcd"), c.layout.etcdArgs(), nil)
	if err != nil {
		return err
	}
	if err := waitHealthy(ctx, etcd, probe{URL: c.layout.EtcdURL() + "/health", Want: `"health":"true"`, Client: insecureClient()}); err != nil {
		return err
	}
	c.phaseDone("etcd healthy")
	apiArgs, err := c.withAudit(c.layout.apiServerArgs(c.opts.Profiling))
	if err != nil {
		return err
	}
	apiserver, err := c.StartProcess("kube-apiserver", c.bin("kube-apiserver"), apiArgs, nil)
	if err != nil {
		return err
	}
	admin, err := adminClient(c.pki)
	if err != nil {
		return err
	}
	if err := waitHealthy(ctx, apiserver, probe{URL: c.layout.APIServerURL() + "/readyz", Want: "ok", Client: admin}); err != nil {
		return err
	}
	c.phaseDone("kube-apiserver ready")
	if err := c.connect(); err != nil {
		return err
	}
	loops := []struct {
		name string
		args []string
		env  []string
		port int
	}{
		{"kube-controller-manager", c.layout.controllerManagerArgs(), nil, c.layout.Ports.ControllerManager},
		{"kube-scheduler", c.layout.schedulerArgs(), nil, c.layout.Ports.Scheduler},
		// kwok also loads ~/.kwok/kwok.yaml when it exists: a home of its own
		// keeps a developer's kwokctl configuration out of this cluster.
		{"kwok", c.layout.kwokArgs(stagesPath), []string{"HOME=" + c.layout.path("kwok")}, c.layout.Ports.Kwok},
	}
	procs := make([]*Process, len(loops))
	for i, l := range loops {
		if procs[i], err = c.StartProcess(l.name, c.bin(l.name), l.args, l.env); err != nil {
			return err
		}
	}
	for i, l := range loops {
		scheme := "https"
		if l.name == "kwok" {
			scheme = "http"
		}
		if err := waitHealthy(ctx, procs[i], probe{URL: url(scheme, l.port) + "/healthz", Want: "ok", Client: insecureClient()}); err != nil {
			return err
		}
		c.phaseDone(l.name + " healthy")
	}
	return nil
}

// connect builds the admin clients from the admin kubeconfig.
func (c *Cluster) connect() error {
	c.AdminKubeconfig = c.layout.kubeconfig("admin")
	cfg, err := clientcmd.BuildConfigFromFlags("", c.AdminKubeconfig)
	if err != nil {
		return fmt.Errorf("load admin kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	if c.Clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return fmt.Errorf("admin clientset: %w", err)
	}
	if c.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return fmt.Errorf("admin dynamic client: %w", err)
	}
	c.Config = cfg
	return nil
}

func (c *Cluster) bin(name string) string { return filepath.Join(c.opts.BinDir, name) }

// Binary returns the path of one of the cached control-plane binaries (e.g. "kubectl").
func (c *Cluster) Binary(name string) string { return c.bin(name) }

// Exited returns the first supervised process that has ended, or nil while all run.
func (c *Cluster) Exited() *Process {
	for _, p := range c.Processes() {
		if p.Exited() {
			return p
		}
	}
	return nil
}

// StartProcess starts and supervises an extra program (e.g. a manager run
// with a ServiceAccount kubeconfig): its own process group, output in
// <Dir>/logs/<name>.log, env added to the current environment, stopped by
// Stop before the control plane. Names must be unique.
func (c *Cluster) StartProcess(name, path string, args, env []string) (*Process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil, fmt.Errorf("start %s: cluster is stopped", name)
	}
	if slices.ContainsFunc(c.procs, func(p *Process) bool { return p.Name == name }) {
		return nil, fmt.Errorf("start %s: a process of that name already runs", name)
	}
	p, err := startProcess(c.layout.path("logs"), name, path, args, env)
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	return p, nil
}

// Processes returns the supervised processes in start order.
func (c *Cluster) Processes() []*Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.procs)
}

// LogDir is where each process writes <name>.log.
func (c *Cluster) LogDir() string { return c.layout.path("logs") }

// KeepOnStop makes Stop leave the state directory (logs, kubeconfigs) in
// place, e.g. after a failed test, whatever Options.Keep said.
func (c *Cluster) KeepOnStop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opts.Keep = true
}

// Stop stops the provisioner, then every process in reverse start order
// (SIGTERM, then SIGKILL after Options.StopTimeout), and removes the state
// directory unless Options.Keep. It is safe to call more than once.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil
	}
	c.stopped = true
	procs := slices.Clone(c.procs)
	stops := slices.Clone(c.stops)
	keep := c.opts.Keep
	c.mu.Unlock()
	var errs []error
	for _, stop := range slices.Backward(stops) {
		if err := stop(c.opts.StopTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	for _, p := range slices.Backward(procs) {
		if err := p.stop(c.opts.StopTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	if !keep && c.Dir != "" {
		if err := os.RemoveAll(c.Dir); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", c.Dir, err))
		}
	}
	return errors.Join(errs...)
}
