package manager

import (
	"errors"
	goflag "flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// Options are the settings shared by every manager binary.
type Options struct {
	MetricsBindAddress            string
	HealthProbeBindAddress        string
	PprofBindAddress              string
	LeaderElect                   bool
	LeaderElectionNamespace       string
	LeaderElectionReleaseOnCancel bool
	LeaseDuration                 time.Duration
	RenewDeadline                 time.Duration
	RetryPeriod                   time.Duration
	GracefulShutdownTimeout       time.Duration
	MaxConcurrentReconciles       int
	KubeAPIQPS                    float32
	KubeAPIBurst                  int
	Kubeconfig                    string
	Zap                           zap.Options
}

// AddFlags registers the common flags on fs, setting o to their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", ":8080",
		`Address the plain-HTTP metrics endpoint binds to; "0" disables it.`)
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", ":8081",
		`Address the /healthz and /readyz probe endpoint binds to; "0" disables it.`)
	fs.StringVar(&o.PprofBindAddress, "pprof-bind-address", "0",
		`Address a net/http/pprof endpoint binds to, for profiling memory and CPU; "0" (the default) disables it.`)
	fs.BoolVar(&o.LeaderElect, "leader-elect", true,
		"Enable leader election so that only one replica reconciles at a time.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader-election Lease; empty means the namespace the pod runs in.")
	fs.BoolVar(&o.LeaderElectionReleaseOnCancel, "leader-election-release-on-cancel", true,
		"Release the leader-election Lease on shutdown so a new leader takes over without waiting for it to expire.")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", 15*time.Second,
		"Duration non-leader replicas wait before forcing acquisition of the Lease.")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", 10*time.Second,
		"Duration the leader retries renewing the Lease before giving up leadership.")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", 500*time.Millisecond,
		"Duration between Lease renewals by the leader, and between acquisition attempts by a standby (jittered up to 2.2x). "+
			"Shorter than client-go's 2s so a standby takes over within 17s of a crashed leader and within about 1s of a released Lease.")
	fs.DurationVar(&o.GracefulShutdownTimeout, "graceful-shutdown-timeout", 30*time.Second,
		"Time given to running controllers to stop on shutdown; 0 stops without waiting.")
	fs.IntVar(&o.MaxConcurrentReconciles, "max-concurrent-reconciles", 10,
		"Maximum number of concurrent reconciles per controller.")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", 50,
		"Queries per second allowed from this manager to the Kubernetes API server.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", 100,
		"Burst of queries allowed from this manager to the Kubernetes API server.")
	BindEnvs(fs,
		"leader-election-namespace", "max-concurrent-reconciles", "kube-api-qps", "kube-api-burst")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "",
		"Path to a kubeconfig file. When unset, the files listed in the KUBECONFIG env var are used if it is set, "+
			"otherwise the in-cluster config, otherwise $HOME/.kube/config.")

	zapFlags := goflag.NewFlagSet("zap", goflag.ContinueOnError)
	o.Zap.BindFlags(zapFlags)
	fs.AddGoFlagSet(zapFlags)
	BindEnv(fs, "zap-devel", "DEV_MODE")
}

// Validate reports every invalid option, each error naming its flag.
func (o *Options) Validate() error {
	var errs []error
	add := func(flag, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s: "+format, append([]any{flag}, args...)...))
	}
	if err := validateBindAddress(o.MetricsBindAddress); err != nil {
		add("metrics-bind-address", "%v", err)
	}
	if err := validateBindAddress(o.HealthProbeBindAddress); err != nil {
		add("health-probe-bind-address", "%v", err)
	}
	if err := validateBindAddress(o.PprofBindAddress); err != nil {
		add("pprof-bind-address", "%v", err)
	}
	durations := []struct {
		flag  string
		value time.Duration
	}{
		{"leader-election-lease-duration", o.LeaseDuration},
		{"leader-election-renew-deadline", o.RenewDeadline},
		{"leader-election-retry-period", o.RetryPeriod},
	}
	positive := true
	for _, d := range durations {
		if d.value <= 0 {
			add(d.flag, "must be positive, got %s", d.value)
			positive = false
		}
	}
	if positive && o.LeaseDuration <= o.RenewDeadline {
		add("leader-election-lease-duration", "must be greater than --leader-election-renew-deadline (%s), got %s",
			o.RenewDeadline, o.LeaseDuration)
	}
	if minimum := time.Duration(leaderelection.JitterFactor * float64(o.RetryPeriod)); positive && o.RenewDeadline <= minimum {
		add("leader-election-renew-deadline", "must be greater than %v x --leader-election-retry-period (%s), got %s",
			leaderelection.JitterFactor, o.RetryPeriod, o.RenewDeadline)
	}
	if o.GracefulShutdownTimeout < 0 {
		add("graceful-shutdown-timeout", "must not be negative, got %s", o.GracefulShutdownTimeout)
	}
	if o.MaxConcurrentReconciles < 1 {
		add("max-concurrent-reconciles", "must be at least 1, got %d", o.MaxConcurrentReconciles)
	}
	if o.KubeAPIQPS <= 0 {
		add("kube-api-qps", "must be greater than 0, got %v", o.KubeAPIQPS)
	}
	if o.KubeAPIBurst < 1 {
		add("kube-api-burst", "must be at least 1, got %d", o.KubeAPIBurst)
	}
	return errors.Join(errs...)
}

// serviceAccountNamespace is where a pod finds its own namespace.
var serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// OwnNamespace is the namespace of the manager's own objects, as leader
// election finds it: --leader-election-namespace, else the namespace the pod
// runs in, else (out of a cluster) "default".
func (o *Options) OwnNamespace() string {
	if o.LeaderElectionNamespace != "" {
		return o.LeaderElectionNamespace
	}
	if data, err := os.ReadFile(serviceAccountNamespace); err == nil && strings.TrimSpace(string(data)) != "" {
		return strings.TrimSpace(string(data))
	}
	return metav1.NamespaceDefault
}

// validateBindAddress accepts "0" (disabled) or host:port with a numeric port.
func validateBindAddress(addr string) error {
	if addr == "0" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf(`must be "0" or host:port, got %q`, addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port must be a number between 0 and 65535, got %q", port)
	}
	return nil
}
