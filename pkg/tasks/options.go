package tasks

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/webhook"
)

// Options are the tasks manager's own settings.
type Options struct {
	// TaskNamespaces are the namespaces whose AgentTasks are reconciled;
	// empty (the default) means all namespaces, each served only if bound
	// to a user or marked a backend namespace.
	TaskNamespaces manager.Namespaces
	// AllowPrivilegedTasks drops the restricted security context of agent pods.
	AllowPrivilegedTasks bool
	// Webhook are the completion-webhook settings.
	Webhook webhook.Flags
	// DefaultTTLSecondsAfterFinished is the Jobs' ttlSecondsAfterFinished
	// unless a task sets its own.
	DefaultTTLSecondsAfterFinished int32
	// PendingStatusDelay delays a new task's Pending status; see Config.
	PendingStatusDelay time.Duration
	// DefaultStartTimeout bounds a task's wait for its agent to start; see Config.
	DefaultStartTimeout time.Duration
	// DefaultTaskTTLSecondsAfterSettled keeps settled tasks this long; see Config.
	DefaultTaskTTLSecondsAfterSettled int32
	// PodDefaultsFile is a YAML PodDefaults file; empty for none.
	PodDefaultsFile string
}

// AddFlags registers the tasks flags on fs, setting o to their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	def := DefaultConfig()
	// --task-namespace (TASK_NAMESPACE) is the flag's old, deprecated name.
	manager.AddWatchNamespaceFlag(fs, &o.TaskNamespaces,
		"Comma-separated namespaces whose AgentTasks are reconciled; empty (the default) means all namespaces. Either way a task is run only in a namespace bound to its user (label scheduler.opsnorth.io/tenant) or a backend namespace (label scheduler.opsnorth.io/backend=true); elsewhere it fails with reason NamespaceNotServed.",
		"task-namespace")
	fs.BoolVar(&o.AllowPrivilegedTasks, "allow-privileged-tasks", false,
		"Run agent pods without the restricted security context (non-root, RuntimeDefault seccomp, no privilege escalation, all capabilities dropped).")
	o.Webhook.AddFlags(fs)
	fs.Int32Var(&o.DefaultTTLSecondsAfterFinished, "default-ttl-seconds-after-finished", def.DefaultTTLSecondsAfterFinished,
		"Seconds a finished Job and its pod are kept, unless the task sets ttlSecondsAfterFinished.")
	fs.DurationVar(&o.PendingStatusDelay, "pending-status-delay", def.PendingStatusDelay,
		"How long a new task's Pending status waits for its pod to run after the Job is created; a task whose pod runs within it goes straight to Running, one status write less. 0 writes Pending at once.")
	fs.DurationVar(&o.DefaultStartTimeout, "default-start-timeout", def.DefaultStartTimeout,
		"How long a task may wait for its agent to start (its pod created, scheduled, its image pulled) unless it sets startTimeoutSeconds; then it fails with the last cause as its reason. 0 waits for ever.")
	fs.Int32Var(&o.DefaultTaskTTLSecondsAfterSettled, "default-task-ttl-seconds-after-settled", def.DefaultTaskTTLSecondsAfterSettled,
		"Seconds a settled AgentTask (ended, webhook delivered or given up) is kept after its completionTime before it is deleted with its Job, unless it sets ttlSecondsAfterSettled. Negative (the default) keeps it; a Workflow's step tasks go with their Workflow.")
	fs.StringVar(&o.PodDefaultsFile, "pod-defaults", "",
		"YAML file of placement every agent pod gets unless its task sets its own: nodeSelector, tolerations, affinity, priorityClassName, runtimeClassName, podMetadata (labels, annotations); with 'enforce: true' tasks may not override what it sets (reason PodDefaultsEnforced); allowedPriorityClasses lists the PriorityClasses tasks may choose (none without it: reason PriorityClassNotAllowed); allowedTolerations, allowedRuntimeClasses, allowedNodeLabels, allowedTopologyKeys, allowUnscopedPodAffinity, allowedLabelPrefixes and allowedAnnotationPrefixes bound a task's own placement and pod metadata (reasons PlacementNotAllowed, PodMetadataNotAllowed). Without it those lists are empty.")
	manager.BindEnvs(fs,
		"allow-privileged-tasks", "default-ttl-seconds-after-finished",
		"pending-status-delay", "default-start-timeout", "default-task-ttl-seconds-after-settled", "pod-defaults")
}

// Validate checks the tasks flags; each error names its flag.
func (o *Options) Validate() error {
	errs := []error{o.Webhook.Validate()}
	if o.DefaultTTLSecondsAfterFinished < 0 {
		errs = append(errs, fmt.Errorf("--default-ttl-seconds-after-finished: must not be negative, got %d", o.DefaultTTLSecondsAfterFinished))
	}
	if o.PendingStatusDelay < 0 {
		errs = append(errs, fmt.Errorf("--pending-status-delay: must not be negative, got %s", o.PendingStatusDelay))
	}
	if o.DefaultStartTimeout < 0 {
		errs = append(errs, fmt.Errorf("--default-start-timeout: must not be negative, got %s", o.DefaultStartTimeout))
	}
	if o.PodDefaultsFile != "" {
		if _, err := LoadPodDefaults(o.PodDefaultsFile); err != nil {
			errs = append(errs, fmt.Errorf("--pod-defaults: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Config returns the controller configuration of validated options.
func (o *Options) Config() (Config, error) {
	hooks, err := o.Webhook.Config("opsnorth-scheduler-tasks/" + manager.Version())
	if err != nil {
		return Config{}, err
	}
	cfg := DefaultConfig()
	cfg.AllowPrivileged = o.AllowPrivilegedTasks
	cfg.DefaultTTLSecondsAfterFinished = o.DefaultTTLSecondsAfterFinished
	cfg.PendingStatusDelay = o.PendingStatusDelay
	cfg.DefaultStartTimeout = o.DefaultStartTimeout
	cfg.DefaultTaskTTLSecondsAfterSettled = o.DefaultTaskTTLSecondsAfterSettled
	cfg.Webhook = hooks
	if o.PodDefaultsFile != "" {
		if cfg.PodDefaults, err = LoadPodDefaults(o.PodDefaultsFile); err != nil {
			return Config{}, fmt.Errorf("--pod-defaults: %w", err)
		}
	}
	return cfg, nil
}

// NewComponent declares the tasks manager for manager.NewCommand: its
// flags, their validation and its controllers. Each call has options of its own.
func NewComponent() manager.Component { return component(&Options{}) }

func component(o *Options) manager.Component {
	return manager.Component{
		Name:             "tasks",
		LeaderElectionID: "tasks.scheduler.opsnorth.io",
		Short:            "Run the manager that reconciles AgentTasks into batch Jobs",
		AddFlags:         o.AddFlags,
		Validate:         o.Validate,
		Namespaces:       func() manager.Namespaces { return o.TaskNamespaces },
		LogValues: func() []any {
			return append(o.Webhook.LogValues(),
				"allowPrivilegedTasks", o.AllowPrivilegedTasks,
				"defaultTTLSecondsAfterFinished", o.DefaultTTLSecondsAfterFinished,
				"defaultStartTimeout", o.DefaultStartTimeout,
				"defaultTaskTTLSecondsAfterSettled", o.DefaultTaskTTLSecondsAfterSettled,
				"podDefaults", o.PodDefaultsFile)
		},
		Setup: manager.SetupWith(o.Config, Setup),
	}
}
