package deployments

// The deployments manager's permissions. `make manifests` turns these markers
// into manifests/rbac/deployments; nothing else grants the manager access.
// Children live in per-user namespaces the manager creates, so these are
// cluster-wide. Every write is a server-side apply (patch; create when the
// object is new) or a delete; reads come from label-filtered caches (list,
// watch), plus live gets of namespaces and live lists while deleting. Pods
// and the events of claims are only read (label- and field-selected caches),
// to say what blocks a rollout.
// Secrets are not among them (ExternalSecrets sync them). The finalizers
// subresource is needed where OwnerReferencesPermissionEnforcement-style
// admission guards finalizers.
//
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=userdeployments,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=userdeployments/status,verbs=patch
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=userdeployments/finalizers,verbs=update
// +kubebuilder:rbac:groups=scheduler.opsnorth.io,resources=deploymenttemplates,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps;services;resourcequotas;limitranges;persistentvolumeclaims,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies;ingresses,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=traefik.io,resources=ingressroutes,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=external-secrets.io,resources=externalsecrets,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=servicemonitors,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods;events,verbs=list;watch
//
// The inventory (inventory.go) lists, metadata only, every namespaced kind
// in a namespace it may delete: the core kinds but Secrets (counted by
// quota instead), every kind of the built-in groups and of the peers it
// knows. A platform lets it see further kinds through the aggregated
// ClusterRole opsnorth-scheduler-deployments-inventory; a kind it may not
// list keeps the namespace.
//
// +kubebuilder:rbac:groups="",resources=serviceaccounts;replicationcontrollers;podtemplates,verbs=list
// +kubebuilder:rbac:groups=apps;batch;autoscaling;policy;networking.k8s.io;discovery.k8s.io;coordination.k8s.io;rbac.authorization.k8s.io;storage.k8s.io;resource.k8s.io;certificates.k8s.io;scheduling.k8s.io;scheduler.opsnorth.io;ossa.ai;traefik.io;traefik.containo.us;external-secrets.io;generators.external-secrets.io;monitoring.coreos.com;kueue.x-k8s.io;cert-manager.io;acme.cert-manager.io;autoscaling.k8s.io;snapshot.storage.k8s.io,resources=*,verbs=list
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
