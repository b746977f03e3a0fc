// Command deployments runs the manager that reconciles UserDeployments and watches DeploymentTemplates.
package main

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"opsnorth.io/scheduler/pkg/deployments"
	"opsnorth.io/scheduler/pkg/manager"
)

func main() {
	if err := manager.NewCommand(deployments.NewComponent()).ExecuteContext(ctrl.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
