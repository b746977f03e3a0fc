package manager

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// NewsHandler enqueues what objects maps obj to, on the events news says
// can change that object's status: news(nil, obj) for a creation,
// news(old, obj) for an update, news(obj, nil) for a deletion. A watch of
// many objects that change often (pods, events) then costs no reconcile
// for a change that carries nothing the status shows.
func NewsHandler(objects func(client.Object) []reconcile.Request, news func(old, obj client.Object) bool) handler.EventHandler {
	enqueue := func(obj client.Object, q queue) {
		for _, req := range objects(obj) {
			q.Add(req)
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
			if news(nil, e.Object) {
				enqueue(e.Object, q)
			}
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			if news(e.ObjectOld, e.ObjectNew) {
				enqueue(e.ObjectNew, q)
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) {
			if news(e.Object, nil) {
				enqueue(e.Object, q)
			}
		},
	}
}
