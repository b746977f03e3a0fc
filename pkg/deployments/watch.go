package deployments

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

func request(obj client.Object) reconcile.Request {
	return reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)}
}

// mapUserDeployment enqueues the deployment itself and those that depend on it.
func (r *Reconciler) mapUserDeployment(_ context.Context, obj client.Object) []reconcile.Request {
	out := []reconcile.Request{request(obj)}
	for _, ud := range r.byIndex(indexDependsOn, obj.GetNamespace()+"/"+obj.GetName()) {
		out = append(out, request(ud))
	}
	return out
}

// mapTemplate enqueues every deployment that uses the template: a new
// template resolves TemplateNotFound, an edit rolls out.
func (r *Reconciler) mapTemplate(_ context.Context, obj client.Object) []reconcile.Request {
	uds := r.byIndex(indexTemplate, obj.GetName())
	out := make([]reconcile.Request, 0, len(uds))
	for _, ud := range uds {
		out = append(out, request(ud))
	}
	return out
}

// mapChild enqueues the owner of an app child (from its annotation), or
// every deployment of the user for per-user objects (namespace, quota).
func (r *Reconciler) mapChild(_ context.Context, obj client.Object) []reconcile.Request {
	if key := obj.GetAnnotations()[render.AnnotationUserDeployment]; key != "" {
		if ns, name, ok := render.ParseKey(key); ok {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
		}
	}
	user := obj.GetLabels()[labelkeys.User]
	if user == "" {
		return nil
	}
	uds := r.byIndex(indexUser, user)
	out := make([]reconcile.Request, 0, len(uds))
	for _, ud := range uds {
		out = append(out, request(ud))
	}
	return out
}
