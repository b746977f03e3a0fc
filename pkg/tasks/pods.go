package tasks

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// podHandler enqueues a pod's task on the pod events that can change the
// task's status: every event of a pod that runs, and of a pending pod only
// when what keeps it from starting changed (podCause). A burst of tasks
// queues many pending pods; their creation and scheduling carry no news.
func podHandler() handler.EventHandler {
	enqueue := func(obj client.Object, q queue) {
		for _, req := range podTask(context.Background(), obj) {
			q.Add(req)
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
			if podNews(nil, e.Object) {
				enqueue(e.Object, q)
			}
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			if podNews(e.ObjectOld, e.ObjectNew) {
				enqueue(e.ObjectNew, q)
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) { enqueue(e.Object, q) },
	}
}

// podNews reports whether a pod's creation (old nil) or update can change
// its task's status.
func podNews(old, obj client.Object) bool {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Status.Phase != corev1.PodPending {
		return true
	}
	prev, _ := old.(*corev1.Pod)
	a, b := podCause(prev), podCause(pod)
	return (a == nil) != (b == nil) || a != nil && *a != *b
}
