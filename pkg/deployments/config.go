package deployments

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
	"opsnorth.io/scheduler/pkg/labelkeys"
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
}

// ChildSelector matches everything the manager creates for users: it
// restricts the caches and watches to the manager's own objects.
func ChildSelector() labels.Selector {
	managed, _ := labels.NewRequirement(labelkeys.ManagedBy, selection.Equals, []string{labelkeys.ManagedByValue})
	user, _ := labels.NewRequirement(labelkeys.User, selection.Exists, nil)
	return labels.NewSelector().Add(*managed, *user)
}

// watchedKinds are the built-in child kinds cached and watched.
func watchedKinds() []client.Object {
	return []client.Object{
		&corev1.ConfigMap{}, &corev1.Service{}, &corev1.PersistentVolumeClaim{},
		&corev1.ResourceQuota{}, &corev1.LimitRange{},
		&appsv1.Deployment{}, &autoscalingv2.HorizontalPodAutoscaler{},
		&networkingv1.NetworkPolicy{}, &networkingv1.Ingress{},
	}
}

// CacheByObject restricts the manager's cache to the children it manages,
// in every namespace (user namespaces are not watch namespaces).
func CacheByObject() map[client.Object]cache.ByObject {
	sel := ChildSelector()
	out := map[client.Object]cache.ByObject{&corev1.Namespace{}: {Label: sel}}
	for _, obj := range watchedKinds() {
		out[obj] = cache.ByObject{Label: sel, Namespaces: map[string]cache.Config{metav1.NamespaceAll: {}}}
	}
	return out
}
