// Package tasks holds the tasks manager's AgentTask controller: each
// AgentTask runs as exactly one batch Job, its status tells the truth of the
// Job and pod, and a completion webhook reports the result.
package tasks

// The tasks manager's permissions. `make manifests` turns these markers into
// manifests/rbac/tasks; nothing else grants the manager access.
//
// AgentTasks are read through informers and only their status is written
// (server-side apply = patch). Setting blockOwnerDeletion on a Job's owner
// reference needs update on agenttasks/finalizers. Jobs are created once and
// never updated or deleted (the garbage collector and the Job TTL do that).
// Pods are only watched. Webhook signing secrets are read with a single GET
// in the task namespace.
//
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=agenttasks,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=agenttasks/status,verbs=get;patch
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=agenttasks/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",namespace=agent-tasks,resources=secrets,verbs=get
