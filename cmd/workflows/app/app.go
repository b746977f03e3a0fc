// Package app declares the workflows manager: its flags and its controllers.
package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/webhook"
	"opsnorth.io/scheduler/pkg/workflows"
)

// defaultWebhookTimeout bounds one completion webhook attempt.
const defaultWebhookTimeout = 10 * time.Second

// Options are the workflows manager's own settings.
type Options struct {
	// WorkflowNamespaces are the namespaces whose Workflows are reconciled;
	// empty means all namespaces.
	WorkflowNamespaces manager.Namespaces
	// WebhookAllowedCIDRs are non-public receiver addresses webhooks may reach.
	WebhookAllowedCIDRs []string
	// WebhookTimeout bounds one webhook attempt.
	WebhookTimeout time.Duration
	// WebhookMaxAttempts bounds the attempts of one webhook delivery.
	WebhookMaxAttempts int32
	// WebhookRetryBaseDelay and WebhookRetryMaxDelay shape the backoff.
	WebhookRetryBaseDelay time.Duration
	WebhookRetryMaxDelay  time.Duration
}

// AddFlags registers the workflows flags on fs, setting o to their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.WorkflowNamespaces = manager.Namespaces{"agent-tasks"}
	fs.Var(&o.WorkflowNamespaces, "workflow-namespace",
		"Comma-separated namespaces whose Workflows are reconciled; empty means all namespaces.")
	manager.BindEnv(fs, "workflow-namespace", "WORKFLOW_NAMESPACE")
	fs.StringSliceVar(&o.WebhookAllowedCIDRs, "webhook-allowed-cidrs", nil,
		"Comma-separated CIDRs or addresses completion webhooks may connect to although they are not public "+
			"(loopback, private, link-local...); all other non-public addresses are refused.")
	manager.BindEnv(fs, "webhook-allowed-cidrs", "WEBHOOK_ALLOWED_CIDRS")
	fs.DurationVar(&o.WebhookTimeout, "webhook-timeout", defaultWebhookTimeout,
		"Timeout of one completion webhook attempt, from dialling to the last byte of the answer.")
	manager.BindEnv(fs, "webhook-timeout", "WEBHOOK_TIMEOUT")
	fs.Int32Var(&o.WebhookMaxAttempts, "webhook-max-attempts", webhook.DefaultPolicy.MaxAttempts,
		"Attempts made to deliver one completion webhook before giving up.")
	manager.BindEnv(fs, "webhook-max-attempts", "WEBHOOK_MAX_ATTEMPTS")
	fs.DurationVar(&o.WebhookRetryBaseDelay, "webhook-retry-base-delay", webhook.DefaultPolicy.BaseDelay,
		"Wait after the first failed webhook attempt; it doubles after each further failure.")
	manager.BindEnv(fs, "webhook-retry-base-delay", "WEBHOOK_RETRY_BASE_DELAY")
	fs.DurationVar(&o.WebhookRetryMaxDelay, "webhook-retry-max-delay", webhook.DefaultPolicy.MaxDelay,
		"Longest wait between two webhook attempts.")
	manager.BindEnv(fs, "webhook-retry-max-delay", "WEBHOOK_RETRY_MAX_DELAY")
}

// Validate checks the workflows flags; each error names its flag.
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
	return errors.Join(errs...)
}

// Config returns the controller configuration of validated options.
func (o *Options) Config() (workflows.Config, error) {
	allowed, err := webhook.ParseCIDRs(o.WebhookAllowedCIDRs)
	if err != nil {
		return workflows.Config{}, fmt.Errorf("--webhook-allowed-cidrs: %w", err)
	}
	return workflows.Config{
		Namespaces:          o.WorkflowNamespaces,
		WebhookAllowedCIDRs: allowed,
		WebhookTimeout:      o.WebhookTimeout,
		WebhookPolicy: webhook.Policy{
			MaxAttempts: o.WebhookMaxAttempts, BaseDelay: o.WebhookRetryBaseDelay, MaxDelay: o.WebhookRetryMaxDelay,
		},
		Budget: workflows.DefaultBudget,
	}, nil
}

// NewCommand returns the workflows manager command.
func NewCommand(options ...manager.CommandOption) *cobra.Command {
	return manager.NewCommand(component(&Options{}), options...)
}

func component(o *Options) manager.Component {
	return manager.Component{
		Name:             "workflows",
		LeaderElectionID: "workflows.scheduler.opsnorth.io",
		Short:            "Run the manager that reconciles Workflows into AgentTasks",
		AddFlags:         o.AddFlags,
		Validate:         o.Validate,
		Namespaces:       func() manager.Namespaces { return o.WorkflowNamespaces },
		LogValues: func() []any {
			return []any{"webhookAllowedCIDRs", o.WebhookAllowedCIDRs, "webhookTimeout", o.WebhookTimeout,
				"webhookMaxAttempts", o.WebhookMaxAttempts}
		},
		Setup: func(ctx context.Context, deps *manager.Deps) error {
			return setup(ctx, deps, o)
		},
	}
}

// setup registers the workflows controllers (Workflow → AgentTasks) with
// deps.Manager; it is the single place where they are added.
func setup(ctx context.Context, deps *manager.Deps, o *Options) error {
	cfg, err := o.Config()
	if err != nil {
		return err
	}
	return workflows.Setup(ctx, deps, cfg)
}
