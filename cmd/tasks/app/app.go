// Package app declares the tasks manager: its flags and its controllers.
package app

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"opsnorth.io/scheduler/pkg/manager"
)

// Options are the tasks manager's own settings.
type Options struct {
	// TaskNamespaces are the namespaces whose AgentTasks are reconciled;
	// empty means all namespaces.
	TaskNamespaces manager.Namespaces
}

// AddFlags registers the tasks flags on fs, setting o to their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.TaskNamespaces = manager.Namespaces{"agent-tasks"}
	fs.Var(&o.TaskNamespaces, "task-namespace",
		"Comma-separated namespaces whose AgentTasks are reconciled; empty means all namespaces.")
	manager.BindEnv(fs, "task-namespace", "TASK_NAMESPACE")
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
		Namespaces:       func() manager.Namespaces { return o.TaskNamespaces },
		Setup: func(ctx context.Context, deps *manager.Deps) error {
			return setup(ctx, deps, o)
		},
	}
}

// setup registers the tasks controllers (AgentTask → batch Job) with
// deps.Manager; it is the single place where they are added.
func setup(_ context.Context, _ *manager.Deps, _ *Options) error {
	return nil
}
