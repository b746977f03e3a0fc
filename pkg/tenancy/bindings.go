package tenancy

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/manager"
)

// ReasonTenantMismatch refuses an object whose spec.userId is not the user
// its namespace is bound to.
const ReasonTenantMismatch = "TenantMismatch"

// CheckBinding returns "" when an object of userID may live in namespace,
// whose labels are nsLabels, and otherwise the refusal, naming the field. A
// namespace labelled labelkeys.Tenant is bound to that one user; any other
// namespace is unbound (the platform backend's) and admits every user.
func CheckBinding(namespace string, nsLabels map[string]string, userID string) string {
	bound, ok := nsLabels[labelkeys.Tenant]
	if !ok || bound == userID {
		return ""
	}
	return fmt.Sprintf("spec.userId: %q is not %q, the user namespace %s is bound to (label %s)",
		userID, bound, namespace, labelkeys.Tenant)
}

// ErrNotSynced is returned until the namespaces are cached: a binding is
// never taken as absent because it was not read yet.
var ErrNotSynced = errors.New("namespace bindings not synced yet")

// Bindings answers CheckBinding from a cache of every namespace's tenant
// and max-tier labels (nothing else of a namespace is kept).
type Bindings struct {
	informer toolscache.SharedIndexInformer
}

// NewBindings asks kube for the namespace informer; call it in Setup. The
// manager needs list and watch on namespaces.
func NewBindings(kube *manager.KubeInformers) (*Bindings, error) {
	inf, err := kube.AllNamespaces(manager.KubeKind{
		Object:    &corev1.Namespace{},
		Resource:  corev1.SchemeGroupVersion.WithResource("namespaces"),
		Transform: keepTenant,
	})
	if err != nil {
		return nil, fmt.Errorf("namespace bindings: %w", err)
	}
	return &Bindings{informer: inf}, nil
}

// keepTenant trims a cached namespace to its name, tenant and max-tier labels.
func keepTenant(obj any) (any, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return obj, nil // a tombstone
	}
	out := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name, ResourceVersion: ns.ResourceVersion}}
	for _, key := range []string{labelkeys.Tenant, labelkeys.MaxTier} {
		if v, ok := ns.Labels[key]; ok {
			if out.Labels == nil {
				out.Labels = map[string]string{}
			}
			out.Labels[key] = v
		}
	}
	return out, nil
}

// Synced is a source that enqueues nothing but holds a controller's workers
// until the namespaces are cached; add it with WatchesRawSource.
func (b *Bindings) Synced() source.SyncingSource { return manager.Watch(b.informer, handler.Funcs{}) }

// Check is CheckBinding for namespace as cached.
func (b *Bindings) Check(namespace, userID string) (string, error) {
	labels, err := b.labels(namespace)
	return CheckBinding(namespace, labels, userID), err
}

// MaxTier returns the max-tier label of namespace and whether the namespace
// is bound at all.
func (b *Bindings) MaxTier(namespace string) (tier string, bound bool, err error) {
	labels, err := b.labels(namespace)
	_, bound = labels[labelkeys.Tenant]
	return labels[labelkeys.MaxTier], bound, err
}

// labels are namespace's cached labels. A namespace not in the cache (just
// created) counts as unlabelled only once the cache has synced.
func (b *Bindings) labels(namespace string) (map[string]string, error) {
	if !b.informer.HasSynced() {
		return nil, ErrNotSynced
	}
	obj, ok, err := b.informer.GetStore().GetByKey(namespace)
	if err != nil || !ok {
		return nil, err
	}
	return obj.(*corev1.Namespace).Labels, nil
}
