package manager

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parsedOptions(t *testing.T, args ...string) Options {
	t.Helper()
	var o Options
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	require.NoError(t, fs.Parse(args))
	return o
}

func TestOptionsDefaults(t *testing.T) {
	o := parsedOptions(t)
	assert.Equal(t, ":8080", o.MetricsBindAddress)
	assert.Equal(t, ":8081", o.HealthProbeBindAddress)
	assert.True(t, o.LeaderElect)
	assert.Empty(t, o.LeaderElectionNamespace)
	assert.True(t, o.LeaderElectionReleaseOnCancel)
	assert.Equal(t, 15*time.Second, o.LeaseDuration)
	assert.Equal(t, 10*time.Second, o.RenewDeadline)
	assert.Equal(t, 500*time.Millisecond, o.RetryPeriod)
	assert.Equal(t, 30*time.Second, o.GracefulShutdownTimeout)
	assert.Equal(t, 10, o.MaxConcurrentReconciles)
	assert.InDelta(t, 50, o.KubeAPIQPS, 0)
	assert.Equal(t, 100, o.KubeAPIBurst)
	assert.Empty(t, o.Kubeconfig)
	assert.False(t, o.Zap.Development)
	require.NoError(t, o.Validate())
}

func TestOptionsFlags(t *testing.T) {
	o := parsedOptions(t, "--metrics-bind-address=0", "--leader-elect=false", "--kube-api-qps=12.5",
		"--kubeconfig=/tmp/kc", "--zap-devel", "--leader-election-lease-duration=1m")
	assert.Equal(t, "0", o.MetricsBindAddress)
	assert.False(t, o.LeaderElect)
	assert.InDelta(t, 12.5, o.KubeAPIQPS, 0)
	assert.Equal(t, "/tmp/kc", o.Kubeconfig)
	assert.True(t, o.Zap.Development)
	assert.Equal(t, time.Minute, o.LeaseDuration)
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		errors []string
	}{
		{name: "defaults"},
		{name: "disabled endpoints", args: []string{"--metrics-bind-address=0", "--health-probe-bind-address=0"}},
		{name: "explicit host", args: []string{"--metrics-bind-address=127.0.0.1:9090"}},
		{name: "metrics address without port", args: []string{"--metrics-bind-address=localhost"},
			errors: []string{"--metrics-bind-address: must be \"0\" or host:port"}},
		{name: "empty metrics address", args: []string{"--metrics-bind-address="},
			errors: []string{"--metrics-bind-address"}},
		{name: "probe port out of range", args: []string{"--health-probe-bind-address=:70000"},
			errors: []string{"--health-probe-bind-address: port must be a number"}},
		{name: "zero concurrency", args: []string{"--max-concurrent-reconciles=0"},
			errors: []string{"--max-concurrent-reconciles: must be at least 1, got 0"}},
		{name: "negative concurrency", args: []string{"--max-concurrent-reconciles=-3"},
			errors: []string{"--max-concurrent-reconciles: must be at least 1, got -3"}},
		{name: "zero qps", args: []string{"--kube-api-qps=0"}, errors: []string{"--kube-api-qps: must be greater than 0"}},
		{name: "negative qps", args: []string{"--kube-api-qps=-1"}, errors: []string{"--kube-api-qps"}},
		{name: "zero burst", args: []string{"--kube-api-burst=0"}, errors: []string{"--kube-api-burst: must be at least 1"}},
		{name: "negative shutdown timeout", args: []string{"--graceful-shutdown-timeout=-1s"},
			errors: []string{"--graceful-shutdown-timeout: must not be negative"}},
		{name: "lease not above renew", args: []string{"--leader-election-lease-duration=10s"},
			errors: []string{"--leader-election-lease-duration: must be greater than --leader-election-renew-deadline"}},
		{name: "renew not above jittered retry", args: []string{"--leader-election-retry-period=9s"},
			errors: []string{"--leader-election-renew-deadline: must be greater than 1.2 x --leader-election-retry-period"}},
		{name: "non-positive retry", args: []string{"--leader-election-retry-period=0s"},
			errors: []string{"--leader-election-retry-period: must be positive"}},
		{name: "all errors reported", args: []string{"--kube-api-qps=0", "--kube-api-burst=0"},
			errors: []string{"--kube-api-qps", "--kube-api-burst"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := parsedOptions(t, tt.args...)
			err := o.Validate()
			if len(tt.errors) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, want := range tt.errors {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}
