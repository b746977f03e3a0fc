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
	// Webhook is how completion webhooks are delivered.
	Webhook webhook.Config
	// PendingStatusDelay is how long after its Job was created a new task's
	// first status (Pending) waits for the pod to run. Most pods run within
	// it and the task goes straight to Running: one status write of three
	// less per task. 0 writes Pending at once.
	PendingStatusDelay time.Duration
	// DefaultStartTimeout is how long a task whose spec sets no
	// startTimeoutSeconds may wait for its agent to start; 0 for ever.
	DefaultStartTimeout time.Duration
	// DefaultTaskTTLSecondsAfterSettled is how long a settled task without
	// a ttlSecondsAfterSettled of its own is kept; negative keeps it.
	DefaultTaskTTLSecondsAfterSettled int32
	// PodDefaults, when set, is the placement of every agent pod that its
	// task does not set, and with Enforce what a task may not override.
	PodDefaults *PodDefaults
}

// DefaultConfig returns the defaults of the manager's flags.
func DefaultConfig() Config {
	return Config{
		DefaultTTLSecondsAfterFinished:    3600,
		Webhook:                           webhook.DefaultConfig("opsnorth-scheduler-tasks"),
		PendingStatusDelay:                3 * time.Second,
		DefaultStartTimeout:               10 * time.Minute,
		DefaultTaskTTLSecondsAfterSettled: -1,
	}
}
