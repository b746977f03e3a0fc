package tasks

// The tasks manager's permissions. `make manifests` turns these markers into
// manifests/rbac/tasks; nothing else grants the manager access. Tasks run
// in every namespace bound to a user or marked a backend namespace, which
// come and go, so the rules are one ClusterRole; everything the manager
// writes is in a task's own namespace, and it acts only where the binding
// check (pkg/tenancy) serves the task.
//
// AgentTasks are read through informers and only their status is written
// (server-side apply = patch); a settled task is deleted at the end of its
// TTL (retention), read once before. Setting blockOwnerDeletion on a Job's owner
// reference needs update on agenttasks/finalizers. Jobs are created once and
// never updated; one is deleted only when its task ended before the agent
// started (stopJob); otherwise the garbage collector and the Job TTL remove
// them. Pods are only watched, and so are the Job controller's FailedCreate
// events (through the core API, which serves those of both event APIs).
// Webhook signing secrets are read with a single GET in the task's namespace;
// before a Job is created, the metadata of the ServiceAccount, Secrets and Kueue LocalQueue a
// task names is read the same way, to check they are labelled for the
// task's user, and the Secrets its env and envFrom read are then read in
// full for their key names (never kept, logged or written); ServiceAccounts are watched too (names only), so a task
// waiting for a missing one starts when it is created. Namespaces are
// watched (their tenant and backend marks only) to refuse a task whose
// namespace is bound to another user or serves nobody.
//
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=agenttasks,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=agenttasks/status,verbs=get;patch
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=agenttasks/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=localqueues,verbs=get
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch
