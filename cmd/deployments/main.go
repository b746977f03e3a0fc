// Command deployments runs the manager that reconciles UserDeployments and watches DeploymentTemplates.
package main

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"opsnorth.io/scheduler/cmd/deployments/app"
)

func main() {
	if err := app.NewCommand().ExecuteContext(ctrl.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
