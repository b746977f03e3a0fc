package manager

import (
	"fmt"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"

	"opsnorth.io/scheduler/generated/clientset/versioned"
	"opsnorth.io/scheduler/generated/informers/externalversions"
	"opsnorth.io/scheduler/generated/informers/externalversions/internalinterfaces"
)

// SchedulerInformers are the generated shared informer factories of the
// scheduler API, one per watched namespace (or one for all namespaces).
// Controllers read scheduler objects through the factories' listers and feed
// their work queues from the same informers (source.Informer), so each
// object is cached once.
type SchedulerInformers struct {
	all         externalversions.SharedInformerFactory
	byNamespace map[string]externalversions.SharedInformerFactory
	namespaces  Namespaces
}

// Namespaces are the watched namespaces; none means all. Controllers that
// build informers of their own watch the same.
func (s *SchedulerInformers) Namespaces() []string { return s.namespaces }

// Factories returns every factory, for registering watches.
func (s *SchedulerInformers) Factories() []externalversions.SharedInformerFactory {
	if s.all != nil {
		return []externalversions.SharedInformerFactory{s.all}
	}
	out := make([]externalversions.SharedInformerFactory, 0, len(s.byNamespace))
	for _, f := range s.byNamespace {
		out = append(out, f)
	}
	return out
}

// ByNamespace returns every factory by the namespace it watches, "" for
// all namespaces.
func (s *SchedulerInformers) ByNamespace() map[string]externalversions.SharedInformerFactory {
	if s.all != nil {
		return map[string]externalversions.SharedInformerFactory{metav1.NamespaceAll: s.all}
	}
	return maps.Clone(s.byNamespace)
}

// For returns the factory whose cache holds objects of namespace, or nil
// when the manager does not watch that namespace. For cluster-scoped kinds
// (DeploymentTemplate) any factory of Factories() serves: their informers
// list cluster-wide whatever the factory's namespace.
func (s *SchedulerInformers) For(namespace string) externalversions.SharedInformerFactory {
	if s.all != nil {
		return s.all
	}
	return s.byNamespace[namespace]
}

// InformersFor registers on each factory the informer of obj that build
// makes for the factory's namespace ("" for all), in place of the factory's
// default informer of that kind, and returns them by namespace. A kind a
// manager caches only in part (label- or field-selected) so comes from the
// same factories as every other: started, synced and checked for readiness
// the same way, and served by the factory's lister. Call it in Setup,
// before anything asks the factories for that kind.
func (s *SchedulerInformers) InformersFor(obj runtime.Object, build func(namespace string) internalinterfaces.NewInformerFunc) map[string]toolscache.SharedIndexInformer {
	out := map[string]toolscache.SharedIndexInformer{}
	for ns, f := range s.ByNamespace() {
		out[ns] = f.InformerFor(obj, build(ns))
	}
	return out
}

// newSchedulerInformers builds the factories for namespaces; an empty list
// watches all namespaces with a single factory. The factories have no resync:
// controllers requeue on their own when they need to.
func newSchedulerInformers(cs versioned.Interface, namespaces Namespaces) *SchedulerInformers {
	if namespaces.All() {
		return &SchedulerInformers{all: externalversions.NewSharedInformerFactory(cs, 0)}
	}
	byNamespace := make(map[string]externalversions.SharedInformerFactory, len(namespaces))
	for _, ns := range namespaces {
		byNamespace[ns] = externalversions.NewSharedInformerFactoryWithOptions(cs, 0, externalversions.WithNamespace(ns))
	}
	return &SchedulerInformers{byNamespace: byNamespace, namespaces: namespaces}
}

// addSchedulerClients builds the generated clientset and informer factories
// from mgr's config and registers the factories to start with the manager.
func addSchedulerClients(mgr ctrl.Manager, namespaces Namespaces, deps *Deps) error {
	cs, err := versioned.NewForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("build scheduler clientset: %w", err)
	}
	deps.Clientset = cs
	deps.Informers = newSchedulerInformers(cs, namespaces)
	for i, f := range deps.Informers.Factories() {
		if err := AddInformerFactory(mgr, fmt.Sprintf("scheduler-%d", i), f); err != nil {
			return err
		}
	}
	return nil
}
