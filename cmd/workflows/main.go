// Command workflows runs the manager that reconciles Workflows into AgentTasks.
package main

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"opsnorth.io/scheduler/cmd/workflows/app"
)

func main() {
	if err := app.NewCommand().ExecuteContext(ctrl.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
