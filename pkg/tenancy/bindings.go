package tenancy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/manager"
)

// Reasons of a Denial.
const (
	// ReasonTenantMismatch refuses an object whose spec.userId is not the
	// user its namespace is bound to.
	ReasonTenantMismatch = "TenantMismatch"
	// ReasonUserNotAllowed refuses an object in a backend namespace whose
	// users list does not name its spec.userId.
	ReasonUserNotAllowed = "UserNotAllowed"
	// ReasonNamespaceNotServed refuses an object in a namespace that is
	// neither bound to a user nor a backend namespace.
	ReasonNamespaceNotServed = "NamespaceNotServed"
)

// Denial is why an object of a user may not live in a namespace; the zero
// Denial allows it.
type Denial struct {
	// Reason is a CamelCase reason for conditions and events.
	Reason string
	// Message names the field and the namespace label that decided.
	Message string
}

// Denied reports whether d refuses.
func (d Denial) Denied() bool { return d.Reason != "" }

// CheckBinding decides whether an object of userID may live in namespace,
// whose labels and annotations are given. A namespace labelled
// labelkeys.Tenant is bound to that one user. One labelled labelkeys.Backend
// (and not bound) is a platform backend's: it acts for the users its
// labelkeys.BackendUsers annotation lists, or for any user without it. Any
// other namespace serves nobody: bindings fail closed.
func CheckBinding(namespace string, nsLabels, nsAnnotations map[string]string, userID string) Denial {
	if bound, ok := nsLabels[labelkeys.Tenant]; ok {
		if bound == userID {
			return Denial{}
		}
		return Denial{ReasonTenantMismatch, fmt.Sprintf("spec.userId: %q is not %q, the user namespace %s is bound to (label %s)",
			userID, bound, namespace, labelkeys.Tenant)}
	}
	if nsLabels[labelkeys.Backend] != labelkeys.BackendValue {
		return Denial{ReasonNamespaceNotServed, fmt.Sprintf("spec.userId: namespace %s is neither bound to a user (label %s=<userId>) nor a backend namespace (label %s=%s)",
			namespace, labelkeys.Tenant, labelkeys.Backend, labelkeys.BackendValue)}
	}
	list, ok := nsAnnotations[labelkeys.BackendUsers]
	if !ok || slices.Contains(BackendUsers(list), userID) {
		return Denial{}
	}
	return Denial{ReasonUserNotAllowed, fmt.Sprintf("spec.userId: %q is not among the users backend namespace %s may act for (annotation %s)",
		userID, namespace, labelkeys.BackendUsers)}
}

// BackendUsers parses a labelkeys.BackendUsers annotation: comma-separated,
// spaces trimmed, empty items dropped (so an empty list admits nobody).
func BackendUsers(list string) []string {
	var out []string
	for item := range strings.SplitSeq(list, ",") {
		if u := strings.TrimSpace(item); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// ErrNotSynced is returned until the namespaces are cached: a binding is
// never taken as absent because it was not read yet.
var ErrNotSynced = errors.New("namespace bindings not synced yet")

// Bindings answers CheckBinding from a cache of every namespace's tenant,
// backend and max-tier labels and backend-users annotation (nothing else of
// a namespace is kept).
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

// keepTenant trims a cached namespace to its name and the labels and
// annotation CheckBinding and MaxTier read.
func keepTenant(obj any) (any, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return obj, nil // a tombstone
	}
	out := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name, ResourceVersion: ns.ResourceVersion}}
	out.Labels = keep(ns.Labels, labelkeys.Tenant, labelkeys.Backend, labelkeys.MaxTier)
	out.Annotations = keep(ns.Annotations, labelkeys.BackendUsers)
	return out, nil
}

// keep is the subset of m with the given keys; nil when none is there.
func keep(m map[string]string, keys ...string) map[string]string {
	var out map[string]string
	for _, key := range keys {
		if v, ok := m[key]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[key] = v
		}
	}
	return out
}

// Synced is a source that enqueues nothing but holds a controller's workers
// until the namespaces are cached; add it with WatchesRawSource.
func (b *Bindings) Synced() source.SyncingSource { return manager.Watch(b.informer, handler.Funcs{}) }

// Check is CheckBinding for namespace as cached.
func (b *Bindings) Check(namespace, userID string) (Denial, error) {
	ns, err := b.namespace(namespace)
	if err != nil {
		return Denial{}, err
	}
	return CheckBinding(namespace, ns.Labels, ns.Annotations, userID), nil
}

// MaxTier returns the max-tier label of namespace and whether the namespace
// is bound at all.
func (b *Bindings) MaxTier(namespace string) (tier string, bound bool, err error) {
	ns, err := b.namespace(namespace)
	_, bound = ns.Labels[labelkeys.Tenant]
	return ns.Labels[labelkeys.MaxTier], bound, err
}

// namespace is namespace as cached. One not in the cache (just created)
// counts as unlabelled only once the cache has synced.
func (b *Bindings) namespace(namespace string) (*corev1.Namespace, error) {
	if !b.informer.HasSynced() {
		return &corev1.Namespace{}, ErrNotSynced
	}
	obj, ok, err := b.informer.GetStore().GetByKey(namespace)
	if err != nil || !ok {
		return &corev1.Namespace{}, err
	}
	return obj.(*corev1.Namespace), nil
}
