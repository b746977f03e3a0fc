package webhook

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"opsnorth.io/scheduler/pkg/manager"
)

// DefaultTimeout bounds one delivery attempt unless --webhook-timeout says otherwise.
const DefaultTimeout = 10 * time.Second

// Flags are the completion-webhook settings shared by the managers that
// deliver webhooks (tasks and workflows), with the same flags and env vars.
type Flags struct {
	// AllowedCIDRs are non-public receiver addresses webhooks may reach.
	AllowedCIDRs []string
	// Timeout bounds one attempt.
	Timeout time.Duration
	// MaxAttempts bounds the attempts of one delivery.
	MaxAttempts int32
	// RetryBaseDelay and RetryMaxDelay shape the exponential backoff.
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
}

// AddFlags registers the --webhook-* flags on fs, setting f to their defaults.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&f.AllowedCIDRs, "webhook-allowed-cidrs", nil,
		"Comma-separated CIDRs or addresses completion webhooks may connect to although they are not public "+
			"(loopback, private, link-local...); all other non-public addresses are refused.")
	manager.BindEnv(fs, "webhook-allowed-cidrs", "WEBHOOK_ALLOWED_CIDRS")
	fs.DurationVar(&f.Timeout, "webhook-timeout", DefaultTimeout,
		"Timeout of one completion webhook attempt, from dialling to the last byte of the answer.")
	manager.BindEnv(fs, "webhook-timeout", "WEBHOOK_TIMEOUT")
	fs.Int32Var(&f.MaxAttempts, "webhook-max-attempts", DefaultPolicy.MaxAttempts,
		"Attempts made to deliver one completion webhook before giving up.")
	manager.BindEnv(fs, "webhook-max-attempts", "WEBHOOK_MAX_ATTEMPTS")
	fs.DurationVar(&f.RetryBaseDelay, "webhook-retry-base-delay", DefaultPolicy.BaseDelay,
		"Wait after the first failed webhook attempt; it doubles after each further failure.")
	manager.BindEnv(fs, "webhook-retry-base-delay", "WEBHOOK_RETRY_BASE_DELAY")
	fs.DurationVar(&f.RetryMaxDelay, "webhook-retry-max-delay", DefaultPolicy.MaxDelay,
		"Longest wait between two webhook attempts.")
	manager.BindEnv(fs, "webhook-retry-max-delay", "WEBHOOK_RETRY_MAX_DELAY")
}

// Validate reports every invalid webhook flag; each error names its flag.
func (f *Flags) Validate() error {
	var errs []error
	if _, err := ParseCIDRs(f.AllowedCIDRs); err != nil {
		errs = append(errs, fmt.Errorf("--webhook-allowed-cidrs: %w", err))
	}
	if f.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--webhook-timeout: must be positive, got %s", f.Timeout))
	}
	if f.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("--webhook-max-attempts: must be at least 1, got %d", f.MaxAttempts))
	}
	if f.RetryBaseDelay <= 0 {
		errs = append(errs, fmt.Errorf("--webhook-retry-base-delay: must be positive, got %s", f.RetryBaseDelay))
	}
	if f.RetryMaxDelay < f.RetryBaseDelay {
		errs = append(errs, fmt.Errorf("--webhook-retry-max-delay: must be at least --webhook-retry-base-delay (%s), got %s",
			f.RetryBaseDelay, f.RetryMaxDelay))
	}
	return errors.Join(errs...)
}

// Guard returns the SSRF guard of the flags.
func (f *Flags) Guard() (Guard, error) {
	allowed, err := ParseCIDRs(f.AllowedCIDRs)
	if err != nil {
		return Guard{}, fmt.Errorf("--webhook-allowed-cidrs: %w", err)
	}
	return Guard{Allowed: allowed}, nil
}

// Policy returns the retry policy of the flags.
func (f *Flags) Policy() Policy {
	return Policy{MaxAttempts: f.MaxAttempts, BaseDelay: f.RetryBaseDelay, MaxDelay: f.RetryMaxDelay}
}

// LogValues are the flags as key/value pairs for the startup log line.
func (f *Flags) LogValues() []any {
	return []any{"webhookAllowedCIDRs", f.AllowedCIDRs, "webhookTimeout", f.Timeout, "webhookMaxAttempts", f.MaxAttempts}
}
