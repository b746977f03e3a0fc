package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	ctrl "sigs.k8s.io/controller-runtime"
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
