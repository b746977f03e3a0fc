// Command workflows runs the manager that reconciles Workflows into AgentTasks.
package main

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/workflows"
)

func main() {
	if err := manager.NewCommand(workflows.NewComponent()).ExecuteContext(ctrl.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
