package workflows

import (
	"github.com/spf13/pflag"

	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/webhook"
)

// Options are the workflows manager's own settings.
type Options struct {
	// WorkflowNamespaces are the namespaces whose Workflows are reconciled;
	// empty means all namespaces.
	WorkflowNamespaces manager.Namespaces
	// Webhook are the completion-webhook settings.
	Webhook webhook.Flags
}

// AddFlags registers the workflows flags on fs, setting o to their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.WorkflowNamespaces = manager.Namespaces{"agent-tasks"}
	fs.Var(&o.WorkflowNamespaces, "workflow-namespace",
		"Comma-separated namespaces whose Workflows are reconciled; empty means all namespaces.")
	manager.BindEnvs(fs, "workflow-namespace")
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
	return Config{Webhook: hooks, Budget: DefaultBudget}, nil
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
		LogValues:        o.Webhook.LogValues,
		Setup:            manager.SetupWith(o.Config, Setup),
	}
}
