package manager

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LastWrites remembers, per object, what a controller's last write returned
// until its informer catches up: while the cache still serves the version
// that write replaced, Latest returns the written object, so a reconcile
// decides on what it wrote instead of writing again from a stale version
// (a Conflict: a wasted write, and a backoff before the retry).
type LastWrites[T client.Object] struct{ m sync.Map }

type lastWrite[T client.Object] struct {
	replaced string
	object   T
}

// Store records that a write replaced version replaced of key with object.
func (l *LastWrites[T]) Store(key types.NamespacedName, replaced string, object T) {
	l.m.Store(key, &lastWrite[T]{replaced: replaced, object: object})
}

// Latest returns the newest known version of key: the written object while
// cached is the version it replaced (true), else cached, and the write is
// forgotten.
func (l *LastWrites[T]) Latest(key types.NamespacedName, cached T) (T, bool) {
	v, ok := l.m.Load(key)
	if !ok {
		return cached, false
	}
	if w := v.(*lastWrite[T]); w.replaced == cached.GetResourceVersion() {
		return w.object, true
	}
	l.m.CompareAndDelete(key, v)
	return cached, false
}

// Forget drops key's write: the object is gone.
func (l *LastWrites[T]) Forget(key types.NamespacedName) { l.m.Delete(key) }
