// Package tasks holds the tasks manager's AgentTask controller.
package tasks

// The tasks manager's permissions. `make manifests` turns these markers into
// manifests/rbac/tasks; nothing else grants the manager access.
//
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=agenttasks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=agenttasks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=agenttasks/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",namespace=agent-tasks,resources=secrets,verbs=get;list;watch
