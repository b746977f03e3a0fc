package tasks

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/testkit"
	"opsnorth.io/scheduler/pkg/webhook"
)

func TestTaskNamespaces(t *testing.T) {
	testkit.NamespaceFlag(t, NewComponent, "watch-namespace", "WATCH_NAMESPACE", nil)
	testkit.NamespaceFlagAlias(t, NewComponent, "task-namespace", "TASK_NAMESPACE")
}

func TestComponent(t *testing.T) {
	c := component(&Options{})
	assert.Equal(t, "tasks", c.Name)
	assert.Equal(t, "tasks.scheduler.opsnorth.io", c.LeaderElectionID)
	assert.Equal(t, "opsnorth-scheduler-tasks", c.FieldOwner())
	require.NotNil(t, c.Setup)
	require.NotNil(t, c.Validate)
}

var tasksEnv = []string{
	"ALLOW_PRIVILEGED_TASKS", "WEBHOOK_ALLOWED_CIDRS", "WEBHOOK_TIMEOUT", "WEBHOOK_MAX_ATTEMPTS",
	"WEBHOOK_RETRY_BASE_DELAY", "WEBHOOK_RETRY_MAX_DELAY", "DEFAULT_TTL_SECONDS_AFTER_FINISHED",
	"DEFAULT_TASK_TTL_SECONDS_AFTER_SETTLED", "POD_DEFAULTS",
}

func TestTaskFlags(t *testing.T) {
	defaults := DefaultConfig()
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		check   func(t *testing.T, cfg Config)
		wantErr string
	}{
		{name: "defaults", check: func(t *testing.T, cfg Config) {
			assert.False(t, cfg.AllowPrivileged)
			assert.Empty(t, cfg.Webhook.Guard.Allowed)
			assert.Equal(t, 10*time.Second, cfg.Webhook.Timeout)
			assert.Equal(t, webhook.Policy{MaxAttempts: 8, BaseDelay: 5 * time.Second, MaxDelay: 5 * time.Minute}, cfg.Webhook.Policy)
			assert.Equal(t, 16, cfg.Webhook.Workers)
			assert.Equal(t, 4, cfg.Webhook.MaxPerHost)
			assert.Equal(t, "opsnorth-scheduler-tasks/"+manager.Version(), cfg.Webhook.UserAgent)
			assert.Equal(t, int32(3600), cfg.DefaultTTLSecondsAfterFinished)
			assert.Equal(t, defaults.Webhook.Policy, cfg.Webhook.Policy)
			assert.Equal(t, int32(-1), cfg.DefaultTaskTTLSecondsAfterSettled, "settled tasks are kept")
			assert.Nil(t, cfg.PodDefaults)
		}},
		{name: "retention and pod defaults", env: map[string]string{"DEFAULT_TASK_TTL_SECONDS_AFTER_SETTLED": "86400"},
			args: []string{"--pod-defaults=" + podDefaultsFile(t, "runtimeClassName: gvisor\nenforce: true\n")},
			check: func(t *testing.T, cfg Config) {
				assert.Equal(t, int32(86400), cfg.DefaultTaskTTLSecondsAfterSettled)
				assert.Equal(t, &PodDefaults{RuntimeClassName: "gvisor", Enforce: true}, cfg.PodDefaults)
			}},
		{name: "pod defaults unreadable", args: []string{"--pod-defaults=/nonexistent/pod-defaults.yaml"}, wantErr: "--pod-defaults: open /nonexistent/pod-defaults.yaml"},
		{name: "pod defaults with a typo", args: []string{"--pod-defaults=" + podDefaultsFile(t, "runtimeclass: gvisor\n")}, wantErr: `unknown field "runtimeclass"`},
		{name: "flags", args: []string{
			"--allow-privileged-tasks", "--webhook-allowed-cidrs=127.0.0.1,10.0.0.0/8", "--webhook-timeout=3s",
			"--webhook-max-attempts=2", "--webhook-retry-base-delay=1s", "--webhook-retry-max-delay=4s",
			"--default-ttl-seconds-after-finished=60", "--webhook-workers=3", "--webhook-max-per-host=1",
		}, check: func(t *testing.T, cfg Config) {
			assert.True(t, cfg.AllowPrivileged)
			assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8")}, cfg.Webhook.Guard.Allowed)
			assert.Equal(t, 3*time.Second, cfg.Webhook.Timeout)
			assert.Equal(t, webhook.Policy{MaxAttempts: 2, BaseDelay: time.Second, MaxDelay: 4 * time.Second}, cfg.Webhook.Policy)
			assert.Equal(t, 3, cfg.Webhook.Workers)
			assert.Equal(t, 1, cfg.Webhook.MaxPerHost)
			assert.Equal(t, int32(60), cfg.DefaultTTLSecondsAfterFinished)
		}},
		{name: "env", env: map[string]string{
			"ALLOW_PRIVILEGED_TASKS": "true", "WEBHOOK_ALLOWED_CIDRS": "192.168.0.0/16", "WEBHOOK_MAX_ATTEMPTS": "3",
			"DEFAULT_TTL_SECONDS_AFTER_FINISHED": "0",
		}, check: func(t *testing.T, cfg Config) {
			assert.True(t, cfg.AllowPrivileged)
			assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("192.168.0.0/16")}, cfg.Webhook.Guard.Allowed)
			assert.Equal(t, int32(3), cfg.Webhook.Policy.MaxAttempts)
			assert.Equal(t, int32(0), cfg.DefaultTTLSecondsAfterFinished)
		}},
		{name: "flag wins over env", env: map[string]string{"WEBHOOK_MAX_ATTEMPTS": "3"}, args: []string{"--webhook-max-attempts=5"},
			check: func(t *testing.T, cfg Config) { assert.Equal(t, int32(5), cfg.Webhook.Policy.MaxAttempts) }},
		{name: "bad cidr", args: []string{"--webhook-allowed-cidrs=10.0.0.0/33"}, wantErr: "--webhook-allowed-cidrs"},
		{name: "bad timeout", args: []string{"--webhook-timeout=0s"}, wantErr: "--webhook-timeout: must be positive"},
		{name: "bad attempts", env: map[string]string{"WEBHOOK_MAX_ATTEMPTS": "0"}, wantErr: "--webhook-max-attempts: must be at least 1"},
		{name: "no workers", args: []string{"--webhook-workers=0"}, wantErr: "--webhook-workers: must be at least 1"},
		{name: "no per-host slot", env: map[string]string{"WEBHOOK_MAX_PER_HOST": "0"}, wantErr: "--webhook-max-per-host: must be at least 1"},
		{name: "max below base", args: []string{"--webhook-retry-base-delay=10s", "--webhook-retry-max-delay=1s"}, wantErr: "--webhook-retry-max-delay"},
		{name: "negative ttl", args: []string{"--default-ttl-seconds-after-finished=-1"}, wantErr: "--default-ttl-seconds-after-finished"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testkit.UnsetEnv(t, append(tasksEnv, "TASK_NAMESPACE", "WATCH_NAMESPACE")...)
			for name, value := range tt.env {
				t.Setenv(name, value)
			}
			o := &Options{}
			if testkit.ParseExpect(t, component(o), tt.wantErr, tt.args...) == nil {
				return
			}
			cfg, err := o.Config()
			require.NoError(t, err)
			tt.check(t, cfg)
		})
	}
}

func podDefaultsFile(t *testing.T, content string) string {
	path := filepath.Join(t.TempDir(), "pod-defaults.yaml")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func TestHelp(t *testing.T) {
	help := testkit.HelpText(t, NewComponent())
	for _, want := range []string{
		"--watch-namespace", "(env WATCH_NAMESPACE)", "empty (the default) means all namespaces", "reason NamespaceNotServed",
		"--kube-api-qps", "(env KUBE_API_QPS)", "--leader-elect", "--version",
		"--allow-privileged-tasks", "(env ALLOW_PRIVILEGED_TASKS)", "--webhook-allowed-cidrs", "(env WEBHOOK_ALLOWED_CIDRS)",
		"--webhook-timeout", "(default 10s)", "--webhook-max-attempts", "(default 8)",
		"--default-ttl-seconds-after-finished", "(default 3600)",
		"--default-task-ttl-seconds-after-settled", "(env DEFAULT_TASK_TTL_SECONDS_AFTER_SETTLED)", "--pod-defaults", "(env POD_DEFAULTS)",
	} {
		assert.Contains(t, help, want)
	}
}
