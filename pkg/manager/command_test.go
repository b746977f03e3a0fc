package manager

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCommandPassesParsedOptionsToRun(t *testing.T) {
	unsetEnv(t, append(commonEnv, "WIDGET")...)
	var widget string
	var got capture
	cmd := NewCommand(testComponent(&widget), WithRunFunc(got.run))

	_, err := execute(cmd, "--max-concurrent-reconciles=4", "--leader-elect=false",
		"--leader-election-retry-period=1s", "--widget=sprocket")
	require.NoError(t, err)
	require.True(t, got.called)
	assert.Equal(t, 4, got.opts.MaxConcurrentReconciles)
	assert.False(t, got.opts.LeaderElect)
	assert.Equal(t, time.Second, got.opts.RetryPeriod)
	assert.Equal(t, "test", got.comp.Name)
	assert.Equal(t, "sprocket", widget)
}

func TestCommandEnvPrecedence(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		check func(t *testing.T, o Options, widget string)
	}{
		{name: "defaults", check: func(t *testing.T, o Options, widget string) {
			assert.Equal(t, 10, o.MaxConcurrentReconciles)
			assert.Equal(t, 100, o.KubeAPIBurst)
			assert.False(t, o.Zap.Development)
			assert.Equal(t, "gear", widget)
		}},
		{name: "env fallback",
			env: map[string]string{"MAX_CONCURRENT_RECONCILES": "3", "KUBE_API_QPS": "5", "KUBE_API_BURST": "9",
				"LEADER_ELECTION_NAMESPACE": "ops", "DEV_MODE": "true", "WIDGET": "cog"},
			check: func(t *testing.T, o Options, widget string) {
				assert.Equal(t, 3, o.MaxConcurrentReconciles)
				assert.InDelta(t, 5, o.KubeAPIQPS, 0)
				assert.Equal(t, 9, o.KubeAPIBurst)
				assert.Equal(t, "ops", o.LeaderElectionNamespace)
				assert.True(t, o.Zap.Development)
				assert.Equal(t, "cog", widget)
			}},
		{name: "flags win over env",
			env:  map[string]string{"MAX_CONCURRENT_RECONCILES": "3", "KUBE_API_QPS": "5", "DEV_MODE": "true", "WIDGET": "cog"},
			args: []string{"--max-concurrent-reconciles=20", "--kube-api-qps=70", "--zap-devel=false", "--widget=nut"},
			check: func(t *testing.T, o Options, widget string) {
				assert.Equal(t, 20, o.MaxConcurrentReconciles)
				assert.InDelta(t, 70, o.KubeAPIQPS, 0)
				assert.False(t, o.Zap.Development)
				assert.Equal(t, "nut", widget)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unsetEnv(t, append(commonEnv, "WIDGET")...)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var widget string
			var got capture
			_, err := execute(NewCommand(testComponent(&widget), WithRunFunc(got.run)), tt.args...)
			require.NoError(t, err)
			require.True(t, got.called)
			tt.check(t, got.opts, widget)
		})
	}
}

func TestCommandValidationErrors(t *testing.T) {
	failing := func(c Component) Component {
		c.Validate = func() error { return errors.New("--widget: broken") }
		return c
	}
	noSetup := func(c Component) Component { c.Setup = nil; return c }
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		modify func(Component) Component
		want   []string
	}{
		{name: "bad qps", args: []string{"--kube-api-qps=0"}, want: []string{"--kube-api-qps"}},
		{name: "negative concurrency from env", env: map[string]string{"MAX_CONCURRENT_RECONCILES": "-1"},
			want: []string{"--max-concurrent-reconciles: must be at least 1, got -1"}},
		{name: "unparsable env", env: map[string]string{"KUBE_API_BURST": "lots"},
			want: []string{`invalid value "lots" for KUBE_API_BURST (--kube-api-burst)`}},
		{name: "common and component errors together", args: []string{"--kube-api-burst=0"}, modify: failing,
			want: []string{"--kube-api-burst", "--widget: broken"}},
		{name: "component without setup", modify: noSetup, want: []string{"component: Setup is required"}},
		{name: "positional arguments", args: []string{"extra"}, want: []string{"unknown command"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unsetEnv(t, append(commonEnv, "WIDGET")...)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var widget string
			c := testComponent(&widget)
			if tt.modify != nil {
				c = tt.modify(c)
			}
			var got capture
			out, err := execute(NewCommand(c, WithRunFunc(got.run)), tt.args...)
			require.Error(t, err)
			for _, want := range tt.want {
				assert.Contains(t, err.Error(), want)
			}
			assert.False(t, got.called, "run must not be called on invalid options")
			assert.Contains(t, out, "Usage:")
		})
	}
}

func TestCommandSilencesUsageOnRunError(t *testing.T) {
	unsetEnv(t, append(commonEnv, "WIDGET")...)
	var widget string
	got := capture{err: errors.New("cluster unreachable")}
	out, err := execute(NewCommand(testComponent(&widget), WithRunFunc(got.run)))
	require.EqualError(t, err, "cluster unreachable")
	assert.NotContains(t, out, "Usage:")
}

func TestCommandHelpListsEveryFlagAndEnv(t *testing.T) {
	var widget string
	cmd := NewCommand(testComponent(&widget))
	out, err := execute(cmd, "--help")
	require.NoError(t, err)

	var envs []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		assert.Contains(t, out, "--"+f.Name)
		if env, ok := EnvVar(f); ok {
			envs = append(envs, env)
			assert.Contains(t, out, "(env "+env+")")
		}
	})
	assert.ElementsMatch(t, append(commonEnv, "WIDGET"), envs)
	for _, name := range []string{"metrics-bind-address", "leader-election-release-on-cancel", "kubeconfig", "zap-log-level", "widget", "version"} {
		assert.Contains(t, out, "--"+name)
	}
	assert.Contains(t, out, "KUBECONFIG")
}

func TestCommandVersion(t *testing.T) {
	old := version
	version = "v1.2.3"
	t.Cleanup(func() { version = old })
	var widget string
	var got capture
	out, err := execute(NewCommand(testComponent(&widget), WithRunFunc(got.run)), "--version")
	require.NoError(t, err)
	assert.Contains(t, out, "test v1.2.3 (go")
	assert.Equal(t, "v1.2.3", Version())
	assert.False(t, got.called)
}

func TestSetupWith(t *testing.T) {
	var got int
	setup := SetupWith(func() (int, error) { return 7, nil }, func(_ context.Context, _ *Deps, cfg int) error {
		got = cfg
		return nil
	})
	require.NoError(t, setup(t.Context(), &Deps{}))
	assert.Equal(t, 7, got, "setup receives the configuration")

	failing := SetupWith(func() (int, error) { return 0, errors.New("--widget: bad") }, func(context.Context, *Deps, int) error {
		t.Fatal("setup must not run without a configuration")
		return nil
	})
	require.EqualError(t, failing(t.Context(), &Deps{}), "--widget: bad")
}
