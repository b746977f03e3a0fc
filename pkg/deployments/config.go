package deployments

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"

	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/manager"
)

// Finalizer holds a UserDeployment until its children, which live in another
// namespace and so cannot have owner references, are gone.
const Finalizer = "scheduler.opsnorth.io/cleanup"

// Config is the deployments controller's configuration.
type Config struct {
	render.Options
	// NamespacePrefix makes user namespaces <prefix>-<userId>.
	NamespacePrefix string
	// Tiers are the known resource tiers.
	Tiers tiers.Config
	// DefaultMaxTier is the most generous tier of a bound namespace without
	// a max-tier label.
	DefaultMaxTier string
	// ReservedHosts are the first host labels no app may take.
	ReservedHosts []string
}

// ChildSelector matches everything the manager creates for users: it
// restricts the caches and watches to the manager's own objects.
func ChildSelector() labels.Selector {
	managed, _ := labels.NewRequirement(labelkeys.ManagedBy, selection.Equals, []string{labelkeys.ManagedByValue})
	user, _ := labels.NewRequirement(labelkeys.User, selection.Exists, nil)
	return labels.NewSelector().Add(*managed, *user)
}

// selectChildren restricts a list or watch to the manager's children.
func selectChildren(o *metav1.ListOptions) { o.LabelSelector = ChildSelector().String() }

// builtinChildren are the built-in kinds of children, cached and watched in
// every namespace (user namespaces are not watched namespaces), each
// selected with selectChildren.
var builtinChildren = map[schema.GroupVersionKind]manager.KubeKind{
	render.GVKNamespace:     {Object: &corev1.Namespace{}, Resource: corev1.SchemeGroupVersion.WithResource("namespaces")},
	render.GVKConfigMap:     {Object: &corev1.ConfigMap{}, Resource: corev1.SchemeGroupVersion.WithResource("configmaps")},
	render.GVKService:       {Object: &corev1.Service{}, Resource: corev1.SchemeGroupVersion.WithResource("services")},
	render.GVKPVC:           {Object: &corev1.PersistentVolumeClaim{}, Resource: corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")},
	render.GVKResourceQuota: {Object: &corev1.ResourceQuota{}, Resource: corev1.SchemeGroupVersion.WithResource("resourcequotas")},
	render.GVKLimitRange:    {Object: &corev1.LimitRange{}, Resource: corev1.SchemeGroupVersion.WithResource("limitranges")},
	render.GVKDeployment:    {Object: &appsv1.Deployment{}, Resource: appsv1.SchemeGroupVersion.WithResource("deployments")},
	render.GVKHPA:           {Object: &autoscalingv2.HorizontalPodAutoscaler{}, Resource: autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers")},
	render.GVKNetworkPolicy: {Object: &networkingv1.NetworkPolicy{}, Resource: networkingv1.SchemeGroupVersion.WithResource("networkpolicies")},
	render.GVKIngress:       {Object: &networkingv1.Ingress{}, Resource: networkingv1.SchemeGroupVersion.WithResource("ingresses")},
}
