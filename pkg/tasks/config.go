package tasks

import (
	"time"

	"opsnorth.io/scheduler/pkg/webhook"
)

// Config is the tasks controller's behaviour, set from the manager's flags.
type Config struct {
	// AllowPrivileged drops the restricted security context from agent pods,
	// leaving the image's defaults (root user, capabilities) in place.
	AllowPrivileged bool
	// DefaultTTLSecondsAfterFinished is the Job's ttlSecondsAfterFinished when
	// the task does not set its own.
	DefaultTTLSecondsAfterFinished int32
	// Webhook bounds the retries of completion webhooks.
	Webhook webhook.Policy
	// WebhookGuard decides which receiver addresses may be dialled.
	WebhookGuard webhook.Guard
	// WebhookTimeout bounds one delivery attempt.
	WebhookTimeout time.Duration
	// UserAgent is sent with every webhook request.
	UserAgent string
	// PendingStatusDelay is how long after its Job was created a new task's
	// first status (Pending) waits for the pod to run. Most pods run within
	// it and the task goes straight to Running: one status write of three
	// less per task. 0 writes Pending at once.
	PendingStatusDelay time.Duration
}

// DefaultConfig returns the defaults of the manager's flags.
func DefaultConfig() Config {
	return Config{
		DefaultTTLSecondsAfterFinished: 3600,
		Webhook:                        webhook.DefaultPolicy,
		WebhookTimeout:                 10 * time.Second,
		UserAgent:                      "opsnorth-scheduler-tasks",
		PendingStatusDelay:             3 * time.Second,
	}
}
