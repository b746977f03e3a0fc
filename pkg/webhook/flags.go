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
	// Workers is the number of attempts in flight at once.
	Workers int
	// MaxPerHost caps the attempts in flight to one receiver host.
	MaxPerHost int
}

// Defaults of the delivery pool: a receiver that hangs holds at most
// DefaultMaxPerHost of the DefaultWorkers for its timeout.
const (
	DefaultWorkers    = 16
	DefaultMaxPerHost = 4
)

// AddFlags registers the --webhook-* flags on fs, setting f to their defaults.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&f.AllowedCIDRs, "webhook-allowed-cidrs", nil,
		"Comma-separated CIDRs or addresses completion webhooks may connect to although they are not public "+
			"(loopback, private...); link-local and cloud metadata addresses only when listed exactly. All other non-public addresses are refused.")
	fs.DurationVar(&f.Timeout, "webhook-timeout", DefaultTimeout,
		"Timeout of one completion webhook attempt, from dialling to the last byte of the answer.")
	fs.Int32Var(&f.MaxAttempts, "webhook-max-attempts", DefaultPolicy.MaxAttempts,
		"Attempts made to deliver one completion webhook before giving up.")
	fs.DurationVar(&f.RetryBaseDelay, "webhook-retry-base-delay", DefaultPolicy.BaseDelay,
		"Wait after the first failed webhook attempt; it doubles after each further failure.")
	fs.DurationVar(&f.RetryMaxDelay, "webhook-retry-max-delay", DefaultPolicy.MaxDelay,
		"Longest wait between two webhook attempts.")
	fs.IntVar(&f.Workers, "webhook-workers", DefaultWorkers,
		"Completion webhook attempts in flight at once, on a pool of their own beside the reconcile workers.")
	fs.IntVar(&f.MaxPerHost, "webhook-max-per-host", DefaultMaxPerHost,
		"Completion webhook attempts in flight to one receiver host (host:port); further due deliveries to it wait their turn.")
	manager.BindEnvs(fs,
		"webhook-allowed-cidrs", "webhook-timeout", "webhook-max-attempts",
		"webhook-retry-base-delay", "webhook-retry-max-delay", "webhook-workers",
		"webhook-max-per-host")
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
	if f.Workers < 1 {
		errs = append(errs, fmt.Errorf("--webhook-workers: must be at least 1, got %d", f.Workers))
	}
	if f.MaxPerHost < 1 {
		errs = append(errs, fmt.Errorf("--webhook-max-per-host: must be at least 1, got %d", f.MaxPerHost))
	}
	return errors.Join(errs...)
}

// Config is how a manager delivers its completion webhooks.
type Config struct {
	Policy Policy
	Guard  Guard
	// Timeout bounds one attempt.
	Timeout time.Duration
	// Workers and MaxPerHost bound the attempts in flight (see Service).
	Workers    int
	MaxPerHost int
	// UserAgent is sent with every request.
	UserAgent string
}

// DefaultConfig is the flags' defaults.
func DefaultConfig(userAgent string) Config {
	return Config{Policy: DefaultPolicy, Timeout: DefaultTimeout, Workers: DefaultWorkers, MaxPerHost: DefaultMaxPerHost, UserAgent: userAgent}
}

// Config returns the delivery configuration of validated flags.
func (f *Flags) Config(userAgent string) (Config, error) {
	allowed, err := ParseCIDRs(f.AllowedCIDRs)
	if err != nil {
		return Config{}, fmt.Errorf("--webhook-allowed-cidrs: %w", err)
	}
	return Config{
		Policy:  Policy{MaxAttempts: f.MaxAttempts, BaseDelay: f.RetryBaseDelay, MaxDelay: f.RetryMaxDelay},
		Guard:   Guard{Allowed: allowed},
		Timeout: f.Timeout, Workers: f.Workers, MaxPerHost: f.MaxPerHost, UserAgent: userAgent,
	}, nil
}

// LogValues are the flags as key/value pairs for the startup log line.
func (f *Flags) LogValues() []any {
	return []any{"webhookAllowedCIDRs", f.AllowedCIDRs, "webhookTimeout", f.Timeout, "webhookMaxAttempts", f.MaxAttempts,
		"webhookWorkers", f.Workers, "webhookMaxPerHost", f.MaxPerHost}
}
