// Package app declares the tasks manager: its flags and its controllers.
package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/tasks"
	"opsnorth.io/scheduler/pkg/webhook"
)

// Options are the tasks manager's own settings.
type Options struct {
	// TaskNamespaces are the namespaces whose AgentTasks are reconciled;
	// empty means all namespaces.
	TaskNamespaces manager.Namespaces
	// AllowPrivilegedTasks drops the restricted security context of agent pods.
	AllowPrivilegedTasks bool
	// WebhookAllowedCIDRs are non-public receiver addresses webhooks may reach.
	WebhookAllowedCIDRs []string
	// WebhookTimeout bounds one webhook attempt.
	WebhookTimeout time.Duration
	// WebhookMaxAttempts bounds the attempts of one webhook delivery.
	WebhookMaxAttempts int32
	// WebhookRetryBaseDelay and WebhookRetryMaxDelay shape the backoff.
	WebhookRetryBaseDelay time.Duration
	WebhookRetryMaxDelay  time.Duration
	// DefaultTTLSecondsAfterFinished is the Jobs' ttlSecondsAfterFinished
	// unless a task sets its own.
	DefaultTTLSecondsAfterFinished int32
}

// AddFlags registers the tasks flags on fs, setting o to their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	def := tasks.DefaultConfig()
	o.TaskNamespaces = manager.Namespaces{"agent-tasks"}
	fs.Var(&o.TaskNamespaces, "task-namespace",
		"Comma-separated namespaces whose AgentTasks are reconciled; empty means all namespaces.")
	manager.BindEnv(fs, "task-namespace", "TASK_NAMESPACE")
	fs.BoolVar(&o.AllowPrivilegedTasks, "allow-privileged-tasks", false,
		"Run agent pods without the restricted security context (non-root, RuntimeDefault seccomp, no privilege escalation, all capabilities dropped).")
	manager.BindEnv(fs, "allow-privileged-tasks", "ALLOW_PRIVILEGED_TASKS")
	fs.StringSliceVar(&o.WebhookAllowedCIDRs, "webhook-allowed-cidrs", nil,
		"Comma-separated CIDRs or addresses completion webhooks may connect to although they are not public "+
			"(loopback, private, link-local...); all other non-public addresses are refused.")
	manager.BindEnv(fs, "webhook-allowed-cidrs", "WEBHOOK_ALLOWED_CIDRS")
	fs.DurationVar(&o.WebhookTimeout, "webhook-timeout", def.WebhookTimeout,
		"Timeout of one completion webhook attempt, from dialling to the last byte of the answer.")
	manager.BindEnv(fs, "webhook-timeout", "WEBHOOK_TIMEOUT")
	fs.Int32Var(&o.WebhookMaxAttempts, "webhook-max-attempts", def.Webhook.MaxAttempts,
		"Attempts made to deliver one completion webhook before giving up.")
	manager.BindEnv(fs, "webhook-max-attempts", "WEBHOOK_MAX_ATTEMPTS")
	fs.DurationVar(&o.WebhookRetryBaseDelay, "webhook-retry-base-delay", def.Webhook.BaseDelay,
		"Wait after the first failed webhook attempt; it doubles after each further failure.")
	manager.BindEnv(fs, "webhook-retry-base-delay", "WEBHOOK_RETRY_BASE_DELAY")
	fs.DurationVar(&o.WebhookRetryMaxDelay, "webhook-retry-max-delay", def.Webhook.MaxDelay,
		"Longest wait between two webhook attempts.")
	manager.BindEnv(fs, "webhook-retry-max-delay", "WEBHOOK_RETRY_MAX_DELAY")
	fs.Int32Var(&o.DefaultTTLSecondsAfterFinished, "default-ttl-seconds-after-finished", def.DefaultTTLSecondsAfterFinished,
		"Seconds a finished Job and its pod are kept, unless the task sets ttlSecondsAfterFinished.")
	manager.BindEnv(fs, "default-ttl-seconds-after-finished", "DEFAULT_TTL_SECONDS_AFTER_FINISHED")
}

// Validate checks the tasks flags; each error names its flag.
func (o *Options) Validate() error {
	var errs []error
	if _, err := webhook.ParseCIDRs(o.WebhookAllowedCIDRs); err != nil {
		errs = append(errs, fmt.Errorf("--webhook-allowed-cidrs: %w", err))
	}
	if o.WebhookTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--webhook-timeout: must be positive, got %s", o.WebhookTimeout))
	}
	if o.WebhookMaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("--webhook-max-attempts: must be at least 1, got %d", o.WebhookMaxAttempts))
	}
	if o.WebhookRetryBaseDelay <= 0 {
		errs = append(errs, fmt.Errorf("--webhook-retry-base-delay: must be positive, got %s", o.WebhookRetryBaseDelay))
	}
	if o.WebhookRetryMaxDelay < o.WebhookRetryBaseDelay {
		errs = append(errs, fmt.Errorf("--webhook-retry-max-delay: must be at least --webhook-retry-base-delay (%s), got %s",
			o.WebhookRetryBaseDelay, o.WebhookRetryMaxDelay))
	}
	if o.DefaultTTLSecondsAfterFinished < 0 {
		errs = append(errs, fmt.Errorf("--default-ttl-seconds-after-finished: must not be negative, got %d", o.DefaultTTLSecondsAfterFinished))
	}
	return errors.Join(errs...)
}

// Config returns the controller configuration of validated options.
func (o *Options) Config() (tasks.Config, error) {
	allowed, err := webhook.ParseCIDRs(o.WebhookAllowedCIDRs)
	if err != nil {
		return tasks.Config{}, fmt.Errorf("--webhook-allowed-cidrs: %w", err)
	}
	cfg := tasks.DefaultConfig()
	cfg.AllowPrivileged = o.AllowPrivilegedTasks
	cfg.DefaultTTLSecondsAfterFinished = o.DefaultTTLSecondsAfterFinished
	cfg.Webhook.MaxAttempts = o.WebhookMaxAttempts
	cfg.Webhook.BaseDelay = o.WebhookRetryBaseDelay
	cfg.Webhook.MaxDelay = o.WebhookRetryMaxDelay
	cfg.WebhookGuard = webhook.Guard{Allowed: allowed}
	cfg.WebhookTimeout = o.WebhookTimeout
	cfg.UserAgent = "opsnorth-scheduler-tasks/" + manager.Version()
	return cfg, nil
}

// NewCommand returns the tasks manager command.
func NewCommand(options ...manager.CommandOption) *cobra.Command {
	return manager.NewCommand(component(&Options{}), options...)
}

func component(o *Options) manager.Component {
	return manager.Component{
		Name:             "tasks",
		LeaderElectionID: "tasks.scheduler.opsnorth.io",
		Short:            "Run the manager that reconciles AgentTasks into batch Jobs",
		AddFlags:         o.AddFlags,
		Validate:         o.Validate,
		Namespaces:       func() manager.Namespaces { return o.TaskNamespaces },
		CacheByObject:    tasks.CacheByObject,
		LogValues: func() []any {
			return []any{
				"allowPrivilegedTasks", o.AllowPrivilegedTasks,
				"webhookAllowedCIDRs", o.WebhookAllowedCIDRs,
				"webhookTimeout", o.WebhookTimeout,
				"webhookMaxAttempts", o.WebhookMaxAttempts,
				"defaultTTLSecondsAfterFinished", o.DefaultTTLSecondsAfterFinished,
			}
		},
		Setup: func(ctx context.Context, deps *manager.Deps) error {
			return setup(ctx, deps, o)
		},
	}
}

// setup registers the tasks controllers (AgentTask → batch Job) with
// deps.Manager; it is the single place where they are added.
func setup(ctx context.Context, deps *manager.Deps, o *Options) error {
	cfg, err := o.Config()
	if err != nil {
		return err
	}
	return tasks.Setup(ctx, tasks.FromManager(deps), cfg)
}
