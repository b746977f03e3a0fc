package tasks

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A task that names a ServiceAccount that does not exist yet waits for it
// (ReasonServiceAccountNotFound) until its start deadline: ServiceAccounts
// are watched, metadata only, so the task starts the moment one appears.
// Secrets cannot be watched (list would grant every Secret's data), so a
// task whose image pull Secret is missing looks again every
// missingSecretPoll.

// trimServiceAccount keeps what the watch needs: the name, to find the tasks
// waiting for it. Labels are read again, uncached, before a Job is created.
func trimServiceAccount(obj any) (any, error) {
	sa, ok := obj.(*corev1.ServiceAccount)
	if !ok {
		return obj, nil
	}
	out := &corev1.ServiceAccount{}
	out.Name, out.Namespace, out.UID, out.ResourceVersion = sa.Name, intern(sa.Namespace), sa.UID, sa.ResourceVersion
	return out, nil
}

// serviceAccountTasks maps a ServiceAccount to the tasks of its namespace
// that name it and have no Job yet: those waiting for it.
func (r *Reconciler) serviceAccountTasks(_ context.Context, obj client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, l := range r.listers {
		tasks, err := l.AgentTasks(obj.GetNamespace()).List(labels.Everything())
		if err != nil {
			continue
		}
		for _, t := range tasks {
			if t.Spec.ServiceAccountName == obj.GetName() && t.Status.JobName == "" && !t.Status.Phase.IsTerminal() {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: t.Namespace, Name: t.Name}})
			}
		}
	}
	return reqs
}
