// Package workflows holds the workflows manager's Workflow controller.
package workflows

// The workflows manager's permissions. `make manifests` turns these markers
// into manifests/rbac/workflows; nothing else grants the manager access.
//
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=workflows,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=workflows/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=workflows/finalizers,verbs=update
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=agenttasks,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",namespace=agent-tasks,resources=secrets,verbs=get;list;watch
