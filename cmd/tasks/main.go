// Command tasks runs the manager that reconciles AgentTasks into batch Jobs.
package main

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"opsnorth.io/scheduler/pkg/manager"
	"opsnorth.io/scheduler/pkg/tasks"
)

func main() {
	if err := manager.NewCommand(tasks.NewComponent()).ExecuteContext(ctrl.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
