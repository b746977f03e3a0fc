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
// they depend on, required or optional; indexAgentID by their own.
const (
	indexDependsOn = "spec.agent.dependencies.agent_id"
	indexAgentID   = "spec.agent.id"
)

func agentID(obj any) ([]string, error) {
	a, ok := obj.(*ossav1.Agent)
	if !ok {
		return nil, nil
	}
	return []string{a.Namespace + "/" + a.Spec.Agent.ID}, nil
}

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

// mapAgent enqueues the Agent, the Agents of its namespace that depend on
// its id (they move as soon as it is Ready, or no longer is) and those
// whose ids it depends on (their NetworkPolicy admits its pods). An update
// maps the old object too, so a changed id or dependency requeues the
// former ones.
func (r *Reconciler) mapAgent(_ context.Context, obj client.Object) []reconcile.Request {
	out := []reconcile.Request{request(obj.GetNamespace(), obj.GetName())}
	a, ok := obj.(*ossav1.Agent)
	if !ok {
		return out
	}
	out = append(out, r.byIndex(a, indexDependsOn, a.Namespace+"/"+a.Spec.Agent.ID)...)
	deps, _ := dependsOn(a)
	for _, key := range deps {
		out = append(out, r.byIndex(a, indexAgentID, key)...)
	}
	return out
}

// byIndex enqueues the Agents other than a under index=key.
func (r *Reconciler) byIndex(a *ossav1.Agent, index, key string) []reconcile.Request {
	var out []reconcile.Request
	for _, inf := range r.agentInformers {
		objs, err := inf.GetIndexer().ByIndex(index, key)
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
