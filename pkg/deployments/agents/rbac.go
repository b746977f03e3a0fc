package agents

// The Agent controller's permissions, beside the UserDeployment
// controller's (pkg/deployments/rbac.go): `make manifests` collects both
// into manifests/rbac/deployments. Agents are read from caches (list,
// watch); their status is written with server-side apply (patch). Children
// are server-side applied (patch; create when new) and pruned (delete)
// from label-selected caches; get is the live read of a child name the
// cache does not hold, which tells a free name from one another owner
// took. Setting blockOwnerDeletion on a child's owner reference needs
// update of agents/finalizers (OwnerReferencesPermissionEnforcement). The
// autoscaler scales an Agent through its scale subresource with the
// kube-controller-manager's own permissions, so the controller needs none
// on agents/scale. The Agents' pods are only read (a label- and
// field-selected cache), to say what keeps them from running ready. The
// namespaces are only read (their max-tier label, from a cache). Each
// namespace's tier quota and limit range are applied (patch; create when
// new) from a cache alone, as the UserDeployment controller applies them,
// and deleted by the garbage collector with the namespace's last Agent.
//
// +kubebuilder:rbac:groups=ossa.ai,resources=agents,verbs=list;watch
// +kubebuilder:rbac:groups=ossa.ai,resources=agents/status,verbs=patch
// +kubebuilder:rbac:groups=ossa.ai,resources=agents/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps;services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=resourcequotas;limitranges,verbs=list;watch;create;patch
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=servicemonitors,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
