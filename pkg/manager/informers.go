package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// InformerFactory is the part of a client-go style SharedInformerFactory
// that InformerRunnable drives: typed and generated factories key their
// caches by reflect.Type, dynamic ones by GroupVersionResource.
type InformerFactory[K comparable] interface {
	Start(stopCh <-chan struct{})
	WaitForCacheSync(stopCh <-chan struct{}) map[K]bool
	Shutdown()
}

// InformerRunnable is a manager.Runnable that starts an InformerFactory on
// every replica (it does not need leader election), waits for its caches to
// sync, and shuts the factory down when the manager stops. Informers must be
// requested from the factory before the manager starts to be started.
type InformerRunnable[K comparable] struct {
	name    string
	factory InformerFactory[K]
	synced  atomic.Bool
}

// NewInformerRunnable returns a runnable for factory; name identifies it in
// errors and in its readiness check.
func NewInformerRunnable[K comparable](name string, factory InformerFactory[K]) *InformerRunnable[K] {
	return &InformerRunnable[K]{name: name, factory: factory}
}

// Start starts the factory and blocks until ctx is cancelled.
func (r *InformerRunnable[K]) Start(ctx context.Context) error {
	r.factory.Start(ctx.Done())
	defer r.factory.Shutdown()
	for typ, ok := range r.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("informers %s: cache for %v did not sync", r.name, typ)
		}
	}
	r.synced.Store(true)
	<-ctx.Done()
	return nil
}

// NeedLeaderElection reports false: informers feed every replica.
func (r *InformerRunnable[K]) NeedLeaderElection() bool { return false }

// Synced is a healthz.Checker that fails until the factory's caches synced.
func (r *InformerRunnable[K]) Synced(_ *http.Request) error {
	if !r.synced.Load() {
		return errors.New("informer caches not synced")
	}
	return nil
}

// AddInformerFactory adds an InformerRunnable for factory to mgr and a readyz
// check named "<name>-informers" that passes once its caches synced.
func AddInformerFactory[K comparable](mgr ctrl.Manager, name string, factory InformerFactory[K]) error {
	r := NewInformerRunnable(name, factory)
	if err := mgr.Add(r); err != nil {
		return fmt.Errorf("add informers %s: %w", name, err)
	}
	if err := mgr.AddReadyzCheck(name+"-informers", r.Synced); err != nil {
		return fmt.Errorf("add readyz check for informers %s: %w", name, err)
	}
	return nil
}

// Watch is a controller's source of events from inf, an informer of one of
// the manager's factories, mapped to requests by h. Unlike source.Informer
// alone, it lets the controller start its workers only once inf has synced,
// as controller-runtime's own Kind sources do: no reconcile reads a cache
// that is still filling (a restarted manager would take a child it has not
// listed yet for missing and write it again).
func Watch(inf toolscache.SharedIndexInformer, h handler.EventHandler) source.SyncingSource {
	return &syncingInformer{Informer: source.Informer{Informer: inf, Handler: h}, synced: inf.HasSynced}
}

type syncingInformer struct {
	source.Informer
	synced toolscache.InformerSynced
}

// WaitForSync blocks until the informer synced or ctx ends (the
// controller's CacheSyncTimeout).
func (s *syncingInformer) WaitForSync(ctx context.Context) error {
	if !toolscache.WaitForCacheSync(ctx.Done(), s.synced) {
		return fmt.Errorf("%s did not sync: %w", s.String(), context.Cause(ctx))
	}
	return nil
}
