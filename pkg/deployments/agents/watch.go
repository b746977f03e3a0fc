package agents

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// indexDependsOn indexes Agents by "<namespace>/<agent id>" of each agent
// they depend on, required or optional.
const indexDependsOn = "spec.agent.dependencies.agent_id"

func dependsOn(obj any) ([]string, error) {
	a, ok := obj.(*ossav1.Agent)
	if !ok || a.Spec.Agent.Dependencies == nil {
		return nil, nil
	}
	deps := a.Spec.Agent.Dependencies
	out := make([]string, 0, len(deps.Required)+len(deps.Optional))
	for _, d := range deps.Required {
		out = append(out, a.Namespace+"/"+d.AgentID)
	}
	for _, d := range deps.Optional {
		out = append(out, a.Namespace+"/"+d.AgentID)
	}
	return out, nil
}

// mapAgent enqueues the Agent and the Agents of its namespace that depend
// on its id: they move as soon as it is Ready (or no longer is). An update
// maps the old object too, so a changed id requeues the former dependents.
func (r *Reconciler) mapAgent(_ context.Context, obj client.Object) []reconcile.Request {
	out := []reconcile.Request{request(obj.GetNamespace(), obj.GetName())}
	a, ok := obj.(*ossav1.Agent)
	if !ok {
		return out
	}
	key := a.Namespace + "/" + a.Spec.Agent.ID
	for _, inf := range r.agentInformers {
		objs, err := inf.GetIndexer().ByIndex(indexDependsOn, key)
		if err != nil {
			continue
		}
		for _, o := range objs {
			if d, ok := o.(*ossav1.Agent); ok && d.UID != a.UID {
				out = append(out, request(d.Namespace, d.Name))
			}
		}
	}
	return out
}

// mapChild enqueues the Agent a child is labelled with.
func mapChild(_ context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetLabels()[labelkeys.Agent]
	if name == "" {
		return nil
	}
	return []reconcile.Request{request(obj.GetNamespace(), name)}
}

func request(namespace, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}
}
