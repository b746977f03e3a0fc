package manager

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// setLoggersOnce guards the process-wide loggers: tests run several managers
// in one process, and replacing the loggers under running goroutines races.
var setLoggersOnce sync.Once

// Run sets up logging, builds the controller-runtime manager for c, calls
// c.Setup and blocks in the manager until ctx is cancelled.
func Run(ctx context.Context, opts Options, c Component) error {
	logger := zap.New(zap.UseFlagOptions(&opts.Zap))
	setLoggersOnce.Do(func() {
		ctrl.SetLogger(logger)
		klog.SetLogger(logger)
	})
	log := logger.WithName("setup")
	log.Info("starting manager", startupValues(opts, c)...)

	restCfg, err := restConfig(opts, c)
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	scheme, err := newScheme(c)
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(restCfg, managerOptions(opts, c, scheme))
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	// Both probes only report that the process serves HTTP; AddInformerFactory
	// adds a readyz check that also waits for informer caches to sync.
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add healthz check: %w", err)
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add readyz check: %w", err)
	}
	deps := &Deps{Manager: mgr, Options: opts, FieldOwner: c.FieldOwner()}
	if err := addSchedulerClients(mgr, namespacesOf(c), deps); err != nil {
		return err
	}
	if deps.Kube, err = newKubeInformers(mgr, namespacesOf(c)); err != nil {
		return err
	}
	if err := c.Setup(ctx, deps); err != nil {
		return fmt.Errorf("set up %s: %w", c.Name, err)
	}
	reportBuildInfo(c.Name)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run manager: %w", err)
	}
	return nil
}

// startupValues are the key/value pairs of the startup log line.
func startupValues(opts Options, c Component) []any {
	values := []any{
		"component", c.Name,
		"version", version,
		"goVersion", goruntime.Version(),
		"namespaces", namespacesOf(c).describe(),
		"leaderElect", opts.LeaderElect,
		"leaderElectionID", c.LeaderElectionID,
		"leaderElectionNamespace", opts.LeaderElectionNamespace,
		"metricsBindAddress", opts.MetricsBindAddress,
		"healthProbeBindAddress", opts.HealthProbeBindAddress,
		"maxConcurrentReconciles", opts.MaxConcurrentReconciles,
		"kubeAPIQPS", opts.KubeAPIQPS,
		"kubeAPIBurst", opts.KubeAPIBurst,
	}
	if c.LogValues != nil {
		values = append(values, c.LogValues()...)
	}
	return values
}

func namespacesOf(c Component) Namespaces {
	if c.Namespaces == nil {
		return nil
	}
	return c.Namespaces()
}

// restConfig loads the kubeconfig (--kubeconfig, else controller-runtime's
// KUBECONFIG / in-cluster / $HOME order) and applies the client rate limits.
func restConfig(opts Options, c Component) (*rest.Config, error) {
	cfg, err := loadRESTConfig(opts.Kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS = opts.KubeAPIQPS
	cfg.Burst = opts.KubeAPIBurst
	cfg.UserAgent = fmt.Sprintf("%s/%s", c.FieldOwner(), version)
	return cfg, nil
}

// loadRESTConfig reads the kubeconfig file at path or, when empty,
// controller-runtime's default: KUBECONFIG, in-cluster, $HOME/.kube/config.
func loadRESTConfig(path string) (*rest.Config, error) {
	if path != "" {
		return clientcmd.BuildConfigFromFlags("", path)
	}
	return config.GetConfig()
}

// newScheme returns client-go's scheme, the scheduler API and the
// component's own API types.
func newScheme(c Component) (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme, schedulerv1alpha1.AddToScheme}, c.AddToScheme...) {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("build scheme: %w", err)
		}
	}
	return scheme, nil
}

// managerOptions maps opts and c onto controller-runtime's manager options.
func managerOptions(opts Options, c Component, scheme *runtime.Scheme) ctrl.Options {
	return ctrl.Options{
		Scheme: scheme,
		// Every watched kind comes from Deps.Informers or Deps.Kube; the
		// manager's own cache must not start an unselected informer behind
		// a cached read.
		Cache:                         cache.Options{ReaderFailOnMissingInformer: true},
		Metrics:                       metricsserver.Options{BindAddress: opts.MetricsBindAddress},
		HealthProbeBindAddress:        opts.HealthProbeBindAddress,
		PprofBindAddress:              opts.PprofBindAddress,
		LeaderElection:                opts.LeaderElect,
		LeaderElectionID:              c.LeaderElectionID,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionResourceLock:    resourcelock.LeasesResourceLock,
		LeaderElectionReleaseOnCancel: opts.LeaderElectionReleaseOnCancel,
		LeaseDuration:                 &opts.LeaseDuration,
		RenewDeadline:                 &opts.RenewDeadline,
		RetryPeriod:                   &opts.RetryPeriod,
		GracefulShutdownTimeout:       &opts.GracefulShutdownTimeout,
		// Every controller's defaults. A binary runs one manager, but tests
		// run several in one process, one after another or side by side,
		// which controller-runtime's process-wide name check would refuse.
		Controller: ctrlconfig.Controller{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, SkipNameValidation: new(true)},
	}
}
