package agents

import (
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// NetworkPolicy, named after the Agent, denies all ingress to its pods
// except from the pods of dependents (the names of Agents in its namespace
// that depend on it, Dependents), on any port: pods labelled managed-by
// and scheduler.opsnorth.io/agent=<dependent>, in the same namespace only.
// Nothing from another namespace is admitted, nor from the Agent's own
// replicas; egress is not restricted.
func NetworkPolicy(a *ossav1.Agent, dependents []string) render.Child {
	spec := networkingv1ac.NetworkPolicySpec().
		WithPodSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(a))).
		WithPolicyTypes(networkingv1.PolicyTypeIngress)
	if len(dependents) > 0 {
		from := metav1ac.LabelSelector().
			WithMatchLabels(map[string]string{labelkeys.ManagedBy: labelkeys.ManagedByValue}).
			WithMatchExpressions(metav1ac.LabelSelectorRequirement().WithKey(labelkeys.Agent).
				WithOperator(metav1.LabelSelectorOpIn).WithValues(dependents...))
		spec.WithIngress(networkingv1ac.NetworkPolicyIngressRule().
			WithFrom(networkingv1ac.NetworkPolicyPeer().WithPodSelector(from)))
	}
	ac := networkingv1ac.NetworkPolicy(a.Name, a.Namespace).WithLabels(Labels(a)).
		WithOwnerReferences(workload(a).OwnerRefs()...).WithSpec(spec)
	return render.Child{GVK: render.GVKNetworkPolicy, Namespace: a.Namespace, Name: a.Name, Object: ac}
}

// Dependents are the names, sorted, of the Agents among peers (the Agents
// of a's namespace) other than a whose required or optional dependencies
// name a's spec.agent.id.
func Dependents(a *ossav1.Agent, peers []*ossav1.Agent) []string {
	var out []string
	for _, p := range peers {
		if p.Name == a.Name || p.Namespace != a.Namespace || p.DeletionTimestamp != nil || !dependsOnID(p, a.Spec.Agent.ID) {
			continue
		}
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func dependsOnID(a *ossav1.Agent, id string) bool {
	d := a.Spec.Agent.Dependencies
	if d == nil {
		return false
	}
	for _, r := range d.Required {
		if r.AgentID == id {
			return true
		}
	}
	for _, o := range d.Optional {
		if o.AgentID == id {
			return true
		}
	}
	return false
}
