package workflows

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/testkit"
	"opsnorth.io/scheduler/pkg/webhook"
)

func TestWorkflowNamespaces(t *testing.T) {
	testkit.NamespaceFlag(t, NewComponent, "watch-namespace", "WATCH_NAMESPACE", nil)
	testkit.NamespaceFlagAlias(t, NewComponent, "workflow-namespace", "WORKFLOW_NAMESPACE")
}

func TestComponent(t *testing.T) {
	c := component(&Options{})
	assert.Equal(t, "workflows", c.Name)
	assert.Equal(t, "workflows.scheduler.opsnorth.io", c.LeaderElectionID)
	assert.Equal(t, "opsnorth-scheduler-workflows", c.FieldOwner())
	require.NotNil(t, c.Setup)
	require.NotNil(t, c.Validate)
}

func TestWebhookFlags(t *testing.T) {
	testkit.UnsetEnv(t, "WORKFLOW_NAMESPACE", "WATCH_NAMESPACE")
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    Config
		wantErr string
	}{
		{
			name: "defaults",
			want: Config{
				Budget: DefaultBudget, DefaultTTLSecondsAfterFinished: -1,
				Webhook: webhook.Config{
					Guard: webhook.Guard{Allowed: []netip.Prefix{}}, Timeout: 10 * time.Second, Policy: webhook.DefaultPolicy,
					Workers: 16, MaxPerHost: 4, UserAgent: "opsnorth-scheduler-workflows/" + manager.Version(),
				},
			},
		},
		{
			name: "flags and env",
			env:  map[string]string{"WEBHOOK_ALLOWED_CIDRS": "127.0.0.1,10.0.0.0/8", "WEBHOOK_MAX_ATTEMPTS": "3", "DEFAULT_WORKFLOW_TTL_SECONDS_AFTER_FINISHED": "600"},
			args: []string{"--webhook-timeout=2s", "--webhook-retry-base-delay=1s", "--webhook-retry-max-delay=4s"},
			want: Config{
				Budget: DefaultBudget, DefaultTTLSecondsAfterFinished: 600,
				Webhook: webhook.Config{
					Guard:   webhook.Guard{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8")}},
					Timeout: 2 * time.Second, Policy: webhook.Policy{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: 4 * time.Second},
					Workers: 16, MaxPerHost: 4, UserAgent: "opsnorth-scheduler-workflows/" + manager.Version(),
				},
			},
		},
		{name: "bad cidr", args: []string{"--webhook-allowed-cidrs=nope"}, wantErr: "--webhook-allowed-cidrs: invalid CIDR or address \"nope\""},
		{name: "bad timeout", args: []string{"--webhook-timeout=0s"}, wantErr: "--webhook-timeout: must be positive"},
		{name: "bad attempts", args: []string{"--webhook-max-attempts=0"}, wantErr: "--webhook-max-attempts: must be at least 1"},
		{name: "bad delays", args: []string{"--webhook-retry-base-delay=10s", "--webhook-retry-max-delay=1s"}, wantErr: "--webhook-retry-max-delay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testkit.UnsetEnv(t, "WEBHOOK_ALLOWED_CIDRS", "WEBHOOK_MAX_ATTEMPTS", "WEBHOOK_TIMEOUT", "DEFAULT_WORKFLOW_TTL_SECONDS_AFTER_FINISHED")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			o := &Options{}
			if testkit.ParseExpect(t, component(o), tt.wantErr, tt.args...) == nil {
				return
			}
			cfg, err := o.Config()
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}

func TestHelp(t *testing.T) {
	help := testkit.HelpText(t, NewComponent())
	for _, want := range []string{
		"--watch-namespace", "(env WATCH_NAMESPACE)", "empty (the default) means all namespaces", "reason NamespaceNotServed",
		"--kube-api-qps", "(env KUBE_API_QPS)", "--leader-elect", "--version",
		"--default-workflow-ttl-seconds-after-finished", "(env DEFAULT_WORKFLOW_TTL_SECONDS_AFTER_FINISHED)", "(default -1)",
	} {
		assert.Contains(t, help, want)
	}
}
