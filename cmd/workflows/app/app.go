// Package app declares the workflows manager: its flags and its controllers.
package app

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"opsnorth.io/scheduler/pkg/manager"
)

// Options are the workflows manager's own settings.
type Options struct {
	// WorkflowNamespaces are the namespaces whose Workflows are reconciled;
	// empty means all namespaces.
	WorkflowNamespaces manager.Namespaces
}

// AddFlags registers the workflows flags on fs, setting o to their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.WorkflowNamespaces = manager.Namespaces{"agent-tasks"}
	fs.Var(&o.WorkflowNamespaces, "workflow-namespace",
		"Comma-separated namespaces whose Workflows are reconciled; empty means all namespaces.")
	manager.BindEnv(fs, "workflow-namespace", "WORKFLOW_NAMESPACE")
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
		Namespaces:       func() manager.Namespaces { return o.WorkflowNamespaces },
		Setup: func(ctx context.Context, deps *manager.Deps) error {
			return setup(ctx, deps, o)
		},
	}
}

// setup registers the workflows controllers (Workflow → AgentTasks) with
// deps.Manager; it is the single place where they are added.
func setup(_ context.Context, _ *manager.Deps, _ *Options) error {
	return nil
}
