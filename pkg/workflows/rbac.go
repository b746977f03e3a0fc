package workflows

// The workflows manager's permissions. `make manifests` turns these markers
// into manifests/rbac/workflows; nothing else grants the manager access.
// Workflows run in every namespace bound to a user or marked a backend
// namespace, which come and go, so the rules are one ClusterRole; all the
// manager writes is in a workflow's own namespace, and only where the
// binding check (pkg/tenancy) serves the workflow.
//
// Workflows: read through informers, status written with server-side apply,
// deleted at the end of their TTL (retention.go).
// AgentTasks: one per step attempt, created, watched and deleted when a
// workflow fails or times out. Secrets: a direct get of the webhook signing
// key (never cached). Namespaces: their tenant and backend marks only, to
// refuse a workflow whose namespace is bound to another user or serves
// nobody. Events: step and workflow lifecycle. A step task's
// controller reference blocks its workflow's deletion, which needs update on
// workflows/finalizers where OwnerReferencesPermissionEnforcement admission
// runs (OpenShift; the local cluster and the test control plane). In its own
// namespace: the step key (provenance.go), read by name and created once.
//
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=workflows,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=workflows/status,verbs=patch
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=workflows/finalizers,verbs=update
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=agenttasks,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:namespace=opsnorth-system,groups="",resources=secrets,verbs=get,resourceNames=opsnorth-scheduler-workflows-step-key
// +kubebuilder:rbac:namespace=opsnorth-system,groups="",resources=secrets,verbs=create
