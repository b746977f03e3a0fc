package manager

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

func TestManagerOptions(t *testing.T) {
	opts := parsedOptions(t, "--metrics-bind-address=:9090", "--leader-election-namespace=ops",
		"--leader-election-release-on-cancel=false", "--max-concurrent-reconciles=7")
	var widget string
	c := testComponent(&widget)
	scheme := runtime.NewScheme()

	got := managerOptions(opts, c, scheme)
	assert.Same(t, scheme, got.Scheme)
	assert.Equal(t, ":9090", got.Metrics.BindAddress)
	assert.False(t, got.Metrics.SecureServing)
	assert.Equal(t, ":8081", got.HealthProbeBindAddress)
	assert.True(t, got.LeaderElection)
	assert.Equal(t, "test.scheduler.opsnorth.io", got.LeaderElectionID)
	assert.Equal(t, "ops", got.LeaderElectionNamespace)
	assert.Equal(t, resourcelock.LeasesResourceLock, got.LeaderElectionResourceLock)
	assert.False(t, got.LeaderElectionReleaseOnCancel)
	assert.Equal(t, opts.LeaseDuration, *got.LeaseDuration)
	assert.Equal(t, opts.RenewDeadline, *got.RenewDeadline)
	assert.Equal(t, opts.RetryPeriod, *got.RetryPeriod)
	assert.Equal(t, opts.GracefulShutdownTimeout, *got.GracefulShutdownTimeout)
	assert.Equal(t, 7, got.Controller.MaxConcurrentReconciles)
	assert.Equal(t, new(true), got.Controller.SkipNameValidation, "tests run several managers in one process")
	assert.Equal(t, cache.Options{ReaderFailOnMissingInformer: true}, got.Cache,
		"the manager's own cache starts no informer behind a cached read")
}

func TestNewScheme(t *testing.T) {
	var widget string
	c := testComponent(&widget)
	added := false
	c.AddToScheme = []func(*runtime.Scheme) error{func(*runtime.Scheme) error { added = true; return nil }}
	scheme, err := newScheme(c)
	require.NoError(t, err)
	assert.True(t, added)
	assert.True(t, scheme.Recognizes(batchv1.SchemeGroupVersion.WithKind("Job")))
	assert.True(t, scheme.Recognizes(corev1.SchemeGroupVersion.WithKind("Pod")))

	c.AddToScheme = []func(*runtime.Scheme) error{func(*runtime.Scheme) error { return errors.New("conflict") }}
	_, err = newScheme(c)
	require.ErrorContains(t, err, "build scheme: conflict")
}

const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: https://example.invalid:6443
contexts:
- name: test
  context:
    cluster: test
    user: test
current-context: test
users:
- name: test
  user:
    token: not-a-secret
`

func TestRestConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, []byte(testKubeconfig), 0o600))
	opts := parsedOptions(t, "--kubeconfig="+path, "--kube-api-qps=7.5", "--kube-api-burst=15")
	var widget string

	cfg, err := restConfig(opts, testComponent(&widget))
	require.NoError(t, err)
	assert.Equal(t, "https://example.invalid:6443", cfg.Host)
	assert.InDelta(t, 7.5, cfg.QPS, 0)
	assert.Equal(t, 15, cfg.Burst)
	assert.Equal(t, "opsnorth-scheduler-test/dev", cfg.UserAgent)

	opts.Kubeconfig = filepath.Join(t.TempDir(), "missing")
	_, err = restConfig(opts, testComponent(&widget))
	require.Error(t, err)
}

func TestStartupValues(t *testing.T) {
	var widget string
	c := testComponent(&widget)
	c.Namespaces = func() Namespaces { return Namespaces{"x"} }
	c.LogValues = func() []any { return []any{"widget", "gear"} }
	values := startupValues(parsedOptions(t), c)
	require.Zero(t, len(values)%2, "key/value pairs")
	got := map[any]any{}
	for i := 0; i < len(values); i += 2 {
		got[values[i]] = values[i+1]
	}
	assert.Equal(t, "test", got["component"])
	assert.Equal(t, "dev", got["version"])
	assert.Equal(t, "x", got["namespaces"])
	assert.Equal(t, "gear", got["widget"])
	assert.NotContains(t, got, "kubeconfig")
}

func TestComponentFieldOwner(t *testing.T) {
	assert.Equal(t, "opsnorth-scheduler-tasks", Component{Name: "tasks"}.FieldOwner())
}
