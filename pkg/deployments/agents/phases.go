package agents

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/deployments/agents/resolve"
	"opsnorth.io/scheduler/pkg/deployments/render"
)

// checkRuntime refuses runtime types that cannot run as a Deployment.
func (r *Reconciler) checkRuntime(_ context.Context, s *scope) (bool, error) {
	if msg := UnsupportedRuntime(s.agent); msg != "" {
		return true, stalled(ReasonUnsupportedRuntime, msg, true)
	}
	return false, nil
}

// checkCapabilities refuses capability schemas that are no valid JSON
// Schema. The check is costly, so it runs only for a generation the status
// has not observed (for one it has, the Stalled condition tells the
// outcome) and whose capabilities differ from those that last passed.
func (r *Reconciler) checkCapabilities(_ context.Context, s *scope) (bool, error) {
	s.status.CapabilityCount = int32(len(s.agent.Spec.Agent.Capabilities))
	if s.agent.Status.ObservedGeneration == s.agent.Generation && s.agent.Status.Phase != "" {
		if c := meta.FindStatusCondition(s.agent.Status.Conditions, conditionStalled); c != nil &&
			c.Reason == ReasonInvalidCapabilitySchema {
			return true, stalled(ReasonInvalidCapabilitySchema, c.Message, true)
		}
		return false, nil
	}
	// A new generation may leave the capabilities as they were (kubectl
	// scale and the autoscaler change spec.replicas): those that passed
	// are not compiled again.
	caps, err := CapabilitiesJSON(s.agent.Spec.Agent.Capabilities)
	if err != nil {
		return true, stalled(ReasonInvalidSpec, err.Error(), false)
	}
	key := types.NamespacedName{Namespace: s.agent.Namespace, Name: s.agent.Name}
	passed := checkedCaps{uid: s.agent.UID, hash: render.Hash(caps, 16)}
	if last, ok := r.checked.Load(key); ok && last == passed {
		return false, nil
	}
	// A *resolve.CapabilityError's text names the capability and the field.
	if err := resolve.Capabilities(s.agent.Spec.Agent.Capabilities); err != nil {
		return true, stalled(ReasonInvalidCapabilitySchema, err.Error(), true)
	}
	r.checked.Store(key, passed)
	return false, nil
}

// resolveDependencies waits, in phase Waiting and creating nothing, for the
// required dependencies of an agent that does not run yet; one that runs
// goes on, its conditions noting what is unmet. A cycle stalls it.
func (r *Reconciler) resolveDependencies(_ context.Context, s *scope) (bool, error) {
	d, err := r.deployment(s.agent)
	if err != nil {
		return true, err
	}
	s.running = d != nil
	peers, err := r.informers.For(s.agent.Namespace).Ossa().V1().Agents().Lister().Agents(s.agent.Namespace).List(labels.Everything())
	if err != nil {
		return true, fmt.Errorf("list the Agents of %s: %w", s.agent.Namespace, err)
	}
	s.peers = peers
	res := resolve.Dependencies(s.agent, peers)
	s.status.Dependencies = res.Dependencies
	switch {
	case res.Ready:
		msg := res.Message
		if msg == "" {
			msg = "every required dependency is ready"
		}
		s.setCondition(ossav1.ConditionDependenciesReady, metav1.ConditionTrue, resolve.ReasonResolved, msg)
		return false, nil
	case len(res.Cycle) > 0 || res.Reason == resolve.ReasonDependencyCycle:
		msg := res.Message
		if msg == "" {
			msg = "dependency cycle: " + strings.Join(res.Cycle, " -> ")
		}
		s.setCondition(ossav1.ConditionDependenciesReady, metav1.ConditionFalse, resolve.ReasonDependencyCycle, msg)
		return true, stalled(ReasonDependencyCycle, msg, false)
	}
	s.setCondition(ossav1.ConditionDependenciesReady, metav1.ConditionFalse, res.Reason, res.Message)
	if s.running {
		s.unmet = res.Message
		return false, nil
	}
	s.clearWorkload()
	s.summarize(ossav1.AgentWaiting, conditions.InProgress, ReasonWaitingForDependencies, res.Message)
	return true, nil
}

// applyChildren applies every desired child that is not already in place.
func (r *Reconciler) applyChildren(ctx context.Context, s *scope) (bool, error) {
	desired, err := Children(s.agent, Options{ServiceMonitor: r.serviceMonitor, NetworkPolicy: r.cfg.NetworkPolicies,
		Tier: s.tier, Dependents: Dependents(s.agent, s.peers)})
	if err != nil {
		return true, stalled(ReasonInvalidSpec, err.Error(), false)
	}
	foreign := func(live *unstructured.Unstructured) string { return foreignOwner(live, s.agent) }
	for _, c := range desired {
		wrote, err := r.apply.Apply(ctx, c, foreign)
		if err != nil {
			return true, err
		}
		s.wrote = s.wrote || wrote
	}
	s.desired = desired
	return false, nil
}

// pruneChildren deletes the Agent's children that are not desired (all of
// them when none is).
func (r *Reconciler) pruneChildren(ctx context.Context, s *scope) (bool, error) {
	keep := map[string]bool{}
	for _, c := range s.desired {
		keep[c.GVK.Kind+"/"+c.Name] = true
	}
	sel := labels.SelectorFromSet(SelectorLabels(s.agent))
	for _, gvk := range Kinds {
		if gvk.Kind == "ServiceMonitor" && !r.serviceMonitor {
			continue
		}
		objs, err := r.reader.List(gvk, s.agent.Namespace, sel)
		if err != nil {
			return true, err
		}
		for _, o := range objs {
			if keep[gvk.Kind+"/"+o.GetName()] || !ownedBy(o, s.agent) {
				continue
			}
			if err := r.deleteChild(ctx, gvk, o); err != nil {
				return true, err
			}
			s.wrote = true
		}
	}
	return false, nil
}

func (r *Reconciler) deleteChild(ctx context.Context, gvk schema.GroupVersionKind, o *unstructured.Unstructured) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(o.GetNamespace())
	u.SetName(o.GetName())
	uid := o.GetUID()
	err := r.client.Delete(ctx, u, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete %s %s/%s: %w", gvk.Kind, o.GetNamespace(), o.GetName(), err)
	}
	return nil
}

// getChild returns a child from its cache or, when the cache does not hold
// it, from the API server: a name another owner took carries none of the
// labels the caches select, and must not be applied over.
func (r *Reconciler) getChild(gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	u, err := r.reader.Get(gvk, namespace, name)
	if err != nil || u != nil {
		return u, err
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvk)
	err = r.apiReader.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, live)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %s %s/%s: %w", gvk.Kind, namespace, name, err)
	}
	return live, nil
}

// ownedBy reports whether a is obj's controller.
func ownedBy(obj metav1.Object, a *ossav1.Agent) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == a.UID
}

// foreignOwner names the owner of a live child that is not a's, "" when it is a's.
func foreignOwner(live *unstructured.Unstructured, a *ossav1.Agent) string {
	if ownedBy(live, a) {
		return ""
	}
	if ref := metav1.GetControllerOfNoCopy(live); ref != nil {
		if ref.Kind == "Agent" && ref.Name == a.Name {
			return "an earlier Agent " + a.Name + " (uid " + string(ref.UID) + ")"
		}
		return ref.Kind + " " + ref.Name
	}
	return "another owner (it is not controlled by Agent " + a.Name + ")"
}
