// Command tasks runs the manager that reconciles AgentTasks into batch Jobs.
package main

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"opsnorth.io/scheduler/cmd/tasks/app"
)

func main() {
	if err := app.NewCommand().ExecuteContext(ctrl.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
