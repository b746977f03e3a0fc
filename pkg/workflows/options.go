package workflows

import (
	"github.com/spf13/pflag"

	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/webhook"
)

// Options are the workflows manager's own settings.
type Options struct {
	// WorkflowNamespaces are the namespaces whose Workflows are reconciled;
	// empty (the default) means all namespaces, each served only if bound
	// to a user or marked a backend namespace.
	WorkflowNamespaces manager.Namespaces
	// Webhook are the completion-webhook settings.
	Webhook webhook.Flags
	// DefaultTTLSecondsAfterFinished keeps finished workflows; see Config.
	DefaultTTLSecondsAfterFinished int32
}

// AddFlags registers the workflows flags on fs, setting o to their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	// --workflow-namespace (WORKFLOW_NAMESPACE) is the flag's old, deprecated name.
	manager.AddWatchNamespaceFlag(fs, &o.WorkflowNamespaces,
		"Comma-separated namespaces whose Workflows are reconciled; empty (the default) means all namespaces. Either way a workflow is run only in a namespace bound to its user (label scheduler.opsnorth.io/tenant) or a backend namespace (label scheduler.opsnorth.io/backend=true); elsewhere it fails with reason NamespaceNotServed.",
		"workflow-namespace")
	fs.Int32Var(&o.DefaultTTLSecondsAfterFinished, "default-workflow-ttl-seconds-after-finished", -1,
		"Seconds a finished Workflow (webhook delivered or given up) is kept after its completionTime before it is deleted with its step tasks, unless it sets ttlSecondsAfterFinished. Negative (the default) keeps it.")
	manager.BindEnvs(fs, "default-workflow-ttl-seconds-after-finished")
	o.Webhook.AddFlags(fs)
}

// Validate checks the workflows flags; each error names its flag.
func (o *Options) Validate() error {
	return o.Webhook.Validate()
}

// Config returns the controller configuration of validated options.
func (o *Options) Config() (Config, error) {
	hooks, err := o.Webhook.Config("opsnorth-scheduler-workflows/" + manager.Version())
	if err != nil {
		return Config{}, err
	}
	return Config{Webhook: hooks, Budget: DefaultBudget, DefaultTTLSecondsAfterFinished: o.DefaultTTLSecondsAfterFinished}, nil
}

// NewComponent declares the workflows manager for manager.NewCommand: its
// flags, their validation and its controllers. Each call has options of its own.
func NewComponent() manager.Component { return component(&Options{}) }

func component(o *Options) manager.Component {
	return manager.Component{
		Name:             "workflows",
		LeaderElectionID: "workflows.scheduler.opsnorth.io",
		Short:            "Run the manager that reconciles Workflows into AgentTasks",
		AddFlags:         o.AddFlags,
		Validate:         o.Validate,
		Namespaces:       func() manager.Namespaces { return o.WorkflowNamespaces },
		LogValues: func() []any {
			return append(o.Webhook.LogValues(), "defaultWorkflowTTLSecondsAfterFinished", o.DefaultTTLSecondsAfterFinished)
		},
		Setup: manager.SetupWith(o.Config, Setup),
	}
}
