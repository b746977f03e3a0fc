package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync/atomic"

	ctrl "sigs.k8s.io/controller-runtime"
)

// InformerFactory is the part of a client-go style SharedInformerFactory
// (including generated ones) that InformerRunnable drives.
type InformerFactory interface {
	Start(stopCh <-chan struct{})
	WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool
	Shutdown()
}

// InformerRunnable is a manager.Runnable that starts an InformerFactory on
// every replica (it does not need leader election), waits for its caches to
// sync, and shuts the factory down when the manager stops. Informers must be
// requested from the factory before the manager starts to be started.
type InformerRunnable struct {
	name    string
	factory InformerFactory
	synced  atomic.Bool
}

// NewInformerRunnable returns a runnable for factory; name identifies it in
// errors and in its readiness check.
func NewInformerRunnable(name string, factory InformerFactory) *InformerRunnable {
	return &InformerRunnable{name: name, factory: factory}
}

// Start starts the factory and blocks until ctx is cancelled.
func (r *InformerRunnable) Start(ctx context.Context) error {
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
func (r *InformerRunnable) NeedLeaderElection() bool { return false }

// Synced is a healthz.Checker that fails until the factory's caches synced.
func (r *InformerRunnable) Synced(_ *http.Request) error {
	if !r.synced.Load() {
		return errors.New("informer caches not synced")
	}
	return nil
}

// AddInformerFactory adds an InformerRunnable for factory to mgr and a readyz
// check named "<name>-informers" that passes once its caches synced.
func AddInformerFactory(mgr ctrl.Manager, name string, factory InformerFactory) error {
	r := NewInformerRunnable(name, factory)
	if err := mgr.Add(r); err != nil {
		return fmt.Errorf("add informers %s: %w", name, err)
	}
	if err := mgr.AddReadyzCheck(name+"-informers", r.Synced); err != nil {
		return fmt.Errorf("add readyz check for informers %s: %w", name, err)
	}
	return nil
}
