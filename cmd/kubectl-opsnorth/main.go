// Command kubectl-opsnorth is the kubectl plugin `kubectl opsnorth`: it
// shows and steers Workflows, AgentTasks and UserDeployments (pkg/plugin).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"opsnorth.io/scheduler/pkg/plugin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	err := plugin.Execute(ctx, plugin.NewCommand(plugin.NewOptions(streams)), os.Stderr)
	stop()
	if err != nil {
		os.Exit(1)
	}
}
