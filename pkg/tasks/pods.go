package tasks

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"opsnorth.io/scheduler/pkg/manager"
)

// podHandler enqueues a pod's task on the pod events that can change the
// task's status: every event of a pod that runs, and of a pending pod only
// when what keeps it from starting changed (podCause). A burst of tasks
// queues many pending pods; their creation and scheduling carry no news.
// A pod leaves the cache (a delete) when it finishes: its name is kept for
// the task's reconcile, which reads the finished pod (observePod).
func (r *Reconciler) podHandler() handler.EventHandler {
	news := manager.NewsHandler(func(obj client.Object) []reconcile.Request { return podTask(context.Background(), obj) }, podNews)
	return handler.Funcs{
		CreateFunc:  news.Create,
		UpdateFunc:  news.Update,
		GenericFunc: news.Generic,
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			for _, req := range podTask(ctx, e.Object) {
				r.finished.leave(req.NamespacedName, e.Object.GetName())
			}
			news.Delete(ctx, e, q)
		},
	}
}

// podNews reports whether a pod's creation (old nil), update or deletion
// (obj nil) can change its task's status.
func podNews(old, obj client.Object) bool {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Status.Phase != corev1.PodPending {
		return true
	}
	prev, _ := old.(*corev1.Pod)
	a, b := podCause(prev), podCause(pod)
	return (a == nil) != (b == nil) || a != nil && *a != *b
}
