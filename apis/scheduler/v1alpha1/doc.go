// Package v1alpha1 holds the scheduler.opsnorth.io/v1alpha1 API: UserDeployment,
// DeploymentTemplate, AgentTask and Workflow.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +groupName=scheduler.opsnorth.io
package v1alpha1
