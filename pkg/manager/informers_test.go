package manager

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
)

// fakeFactory reports sync once release is closed, with the result synced.
type fakeFactory struct {
	release  chan struct{}
	synced   bool
	started  atomic.Bool
	shutdown atomic.Bool
}

func (f *fakeFactory) Start(<-chan struct{}) { f.started.Store(true) }

func (f *fakeFactory) WaitForCacheSync(stop <-chan struct{}) map[reflect.Type]bool {
	select {
	case <-f.release:
	case <-stop:
		return map[reflect.Type]bool{reflect.TypeFor[corev1.Pod](): false}
	}
	return map[reflect.Type]bool{reflect.TypeFor[corev1.Pod](): f.synced}
}

func (f *fakeFactory) Shutdown() { f.shutdown.Store(true) }

func TestInformerRunnableSyncsAndStops(t *testing.T) {
	f := &fakeFactory{release: make(chan struct{}), synced: true}
	r := NewInformerRunnable("api", f)
	assert.False(t, r.NeedLeaderElection())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Start(ctx) }()

	require.Eventually(t, f.started.Load, 10*time.Second, time.Millisecond)
	require.EqualError(t, r.Synced(nil), "informer caches not synced")
	close(f.release)
	require.Eventually(t, func() bool { return r.Synced(nil) == nil }, 10*time.Second, time.Millisecond)
	assert.False(t, f.shutdown.Load())

	cancel()
	require.NoError(t, <-done)
	assert.True(t, f.shutdown.Load())
}

func TestInformerRunnableSyncFailure(t *testing.T) {
	f := &fakeFactory{release: make(chan struct{}), synced: false}
	close(f.release)
	r := NewInformerRunnable("api", f)
	err := r.Start(t.Context())
	require.ErrorContains(t, err, "informers api: cache for v1.Pod did not sync")
	assert.Error(t, r.Synced(nil))
	assert.True(t, f.shutdown.Load())
}

func TestInformerRunnableCancelledBeforeSync(t *testing.T) {
	f := &fakeFactory{release: make(chan struct{})}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.NoError(t, NewInformerRunnable("api", f).Start(ctx))
	assert.True(t, f.shutdown.Load())
}

// recordingManager records what AddInformerFactory registers.
type recordingManager struct {
	ctrl.Manager
	runnables []ctrlmanager.Runnable
	readyz    map[string]healthz.Checker
}

func (m *recordingManager) Add(r ctrlmanager.Runnable) error {
	m.runnables = append(m.runnables, r)
	return nil
}

func (m *recordingManager) AddReadyzCheck(name string, check healthz.Checker) error {
	m.readyz[name] = check
	return nil
}

func TestAddInformerFactory(t *testing.T) {
	m := &recordingManager{readyz: map[string]healthz.Checker{}}
	require.NoError(t, AddInformerFactory(m, "scheduler", &fakeFactory{}))
	require.Len(t, m.runnables, 1)
	r, ok := m.runnables[0].(*InformerRunnable[reflect.Type])
	require.True(t, ok)
	require.Contains(t, m.readyz, "scheduler-informers")
	assert.Error(t, m.readyz["scheduler-informers"](nil))
	r.synced.Store(true)
	assert.NoError(t, m.readyz["scheduler-informers"](nil))
}

// flagInformer is an informer that has synced once its flag is set.
type flagInformer struct {
	toolscache.SharedIndexInformer
	synced atomic.Bool
}

func (f *flagInformer) HasSynced() bool { return f.synced.Load() }

func TestWatchWaitsForSync(t *testing.T) {
	inf := &flagInformer{}
	src := Watch(inf, &handler.EnqueueRequestForObject{})

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, src.WaitForSync(ctx), context.DeadlineExceeded, "the controller's workers wait while the cache fills")

	done := make(chan error, 1)
	go func() { done <- src.WaitForSync(t.Context()) }()
	inf.synced.Store(true)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("WaitForSync did not return once the informer synced")
	}
}
