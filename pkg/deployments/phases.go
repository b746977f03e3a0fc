package deployments

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/deployments/children"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// checkTenant refuses a deployment whose namespace does not admit its user
// (tenancy.CheckBinding), or that asks for a tier above what its bound
// namespace allows. Backend namespaces choose users and tiers.
func (r *Reconciler) checkTenant(_ context.Context, s *scope) (bool, error) {
	denial, err := r.bindings.Check(s.ud.Namespace, s.ud.Spec.UserID)
	if err != nil {
		return true, err
	}
	if denial.Denied() {
		return true, stalled(denial.Reason, denial.Message)
	}
	maxTier, bound, err := r.bindings.MaxTier(s.ud.Namespace)
	if err != nil || !bound {
		return err != nil, err
	}
	source := "label " + labelkeys.MaxTier + " of namespace " + s.ud.Namespace
	if maxTier == "" {
		maxTier, source = r.cfg.DefaultMaxTier, "--default-max-tier, namespace "+s.ud.Namespace+" has no "+labelkeys.MaxTier+" label"
	}
	if err := r.cfg.Tiers.Allowed(s.ud.Spec.Tier, maxTier); err != nil {
		return true, stalled(ReasonTierNotAllowed, fmt.Sprintf("spec.tier: %v (%s)", err, source))
	}
	return false, nil
}

// resolveTemplate finds the DeploymentTemplate, or builds the one-service
// template of a raw image.
func (r *Reconciler) resolveTemplate(_ context.Context, s *scope) (bool, error) {
	var tmpl *v1alpha1.DeploymentTemplate
	reason, msg := ReasonRawImage, "runs spec.image"
	if name := s.ud.Spec.Template; name != "" {
		t, err := r.templates.Get(name)
		if apierrors.IsNotFound(err) {
			return true, stalled(ReasonTemplateNotFound, fmt.Sprintf("DeploymentTemplate %q not found", name))
		}
		if err != nil {
			return true, fmt.Errorf("get template %s: %w", name, err)
		}
		tmpl, reason, msg = t, ReasonResolved, fmt.Sprintf("DeploymentTemplate %q generation %d", name, t.Generation)
	}
	services, err := render.Services(s.ud, tmpl)
	if err != nil {
		return true, stalled(ReasonInvalidSpec, err.Error())
	}
	s.app = &render.App{UD: s.ud, Services: services, Namespace: s.status.Namespace}
	s.setCondition(ConditionTemplateResolved, metav1.ConditionTrue, reason, msg)
	return false, nil
}

// resolveTier picks the tier and checks the replica counts and container
// resources against it.
func (r *Reconciler) resolveTier(_ context.Context, s *scope) (bool, error) {
	t, err := r.cfg.Tiers.Get(s.ud.Spec.Tier)
	if err != nil {
		return true, stalled(ReasonUnknownTier, err.Error())
	}
	if err := render.CheckTier(s.ud, s.app.Services, t); err != nil {
		return true, stalled(ReasonTierExceeded, err.Error())
	}
	s.app.Tier = t
	return false, nil
}

// checkSecrets refuses remote secret references that could leave the
// user's secret key prefix, before anything of the app is created.
func (r *Reconciler) checkSecrets(_ context.Context, s *scope) (bool, error) {
	prefix := render.SecretKeyPrefix(r.cfg.SecretKeyPrefix, s.ud.Spec.UserID)
	if err := render.CheckSecretRefs(s.ud.Spec.Secrets, prefix); err != nil {
		return true, stalled(ReasonSecretKeyNotAllowed, err.Error())
	}
	return false, nil
}

// checkDependencies waits, in phase pending, for dependsOn to be ready.
func (r *Reconciler) checkDependencies(_ context.Context, s *scope) (bool, error) {
	if len(s.ud.Spec.DependsOn) == 0 {
		s.setCondition(ConditionDependenciesReady, metav1.ConditionTrue, ReasonNoDependencies, "no dependencies")
		return false, nil
	}
	lister := r.informers.For(s.ud.Namespace).Scheduler().V1alpha1().UserDeployments().Lister().UserDeployments(s.ud.Namespace)
	var waiting []string
	for _, name := range s.ud.Spec.DependsOn {
		dep, err := lister.Get(name)
		if err != nil || dep.Status.Phase != v1alpha1.PhaseReady || dep.Status.ObservedGeneration != dep.Generation {
			waiting = append(waiting, name)
		}
	}
	if len(waiting) > 0 {
		msg := "waiting for " + strings.Join(waiting, ", ") + " to be ready"
		s.setCondition(ConditionDependenciesReady, metav1.ConditionFalse, ReasonDependenciesNotReady, msg)
		s.summarize(v1alpha1.PhasePending, conditions.InProgress, ReasonDependenciesNotReady, msg)
		return true, nil
	}
	s.setCondition(ConditionDependenciesReady, metav1.ConditionTrue, ReasonDependenciesReady, "all dependencies are ready")
	return false, nil
}

// applyChildren applies every desired child that is not already in place.
func (r *Reconciler) applyChildren(ctx context.Context, s *scope) (bool, error) {
	children, err := render.Children(s.app, r.cfg.Options, r.caps)
	if errors.Is(err, render.ErrSecretKeyNotAllowed) {
		return true, stalled(ReasonSecretKeyNotAllowed, err.Error())
	}
	if err != nil {
		return true, stalled(ReasonInvalidSpec, err.Error())
	}
	for _, c := range children {
		if err := r.noteReattached(s, c); err != nil {
			return true, err
		}
		wrote, err := r.apply.apply(ctx, c, render.Key(s.ud))
		if err != nil {
			return true, err
		}
		s.wrote = s.wrote || wrote
	}
	s.desired = children
	return false, nil
}

// noteReattached tells the user when a retained volume claim is in use
// again: one the status lists, or one older than the app (left by an
// earlier app of this name).
func (r *Reconciler) noteReattached(s *scope, c render.Child) error {
	if c.GVK != render.GVKPVC {
		return nil
	}
	live, err := r.reader.Get(c.GVK, c.Namespace, c.Name)
	if err != nil || live == nil || live.GetAnnotations()[render.AnnotationUserDeployment] != render.Key(s.ud) {
		return err
	}
	created := live.GetCreationTimestamp()
	if !slices.Contains(s.ud.Status.RetainedClaims, c.Name) && !created.Before(&s.ud.CreationTimestamp) {
		return nil
	}
	r.recorder.Eventf(s.ud, nil, "Normal", ReasonClaimReattached, "Reconcile",
		"volume claim %s, retained with its data, is attached again", c.Name)
	return nil
}

// pruneChildren deletes this deployment's children that are no longer desired.
func (r *Reconciler) pruneChildren(ctx context.Context, s *scope) (bool, error) {
	keep := map[string]bool{}
	for _, c := range s.desired {
		keep[c.GVK.Kind+"/"+c.Name] = true
	}
	s.status.RetainedClaims = nil
	for _, gvk := range r.appKinds() {
		objs, err := r.reader.List(gvk, s.status.Namespace, appChildSelector(s.ud))
		if err != nil {
			return true, err
		}
		for _, o := range objs {
			if keep[gvk.Kind+"/"+o.GetName()] || o.GetAnnotations()[render.AnnotationUserDeployment] != render.Key(s.ud) {
				continue
			}
			if gvk == render.GVKPVC && render.Retained(o.GetAnnotations()) {
				s.status.RetainedClaims = append(s.status.RetainedClaims, o.GetName())
				continue
			}
			if err := r.deleteObject(ctx, gvk, o.GetNamespace(), o.GetName()); err != nil {
				return true, err
			}
			s.wrote = true
		}
	}
	return false, nil
}

// observeRollout sums ready replicas and decides between provisioning, ready
// and stopped. A rollout that does not finish names, per service, what
// blocks it (serviceBlocked); one past its progress deadline is phase error.
// Right after a write the caches show the children before it: their
// causes wait for the next reconcile, which the write's own events bring.
func (r *Reconciler) observeRollout(_ context.Context, s *scope) (bool, error) {
	s.status.Ingresses = slices.Clone(s.app.Hosts)
	var ready int32
	var blockedServices []blocked
	converged := !s.wrote
	for _, c := range s.desired {
		if c.GVK != render.GVKDeployment {
			continue
		}
		d, err := r.getDeployment(c.Namespace, c.Name)
		if err != nil {
			return true, err
		}
		if d == nil {
			converged = false
			continue
		}
		ready += d.Status.ReadyReplicas
		if children.DeploymentReady(d) {
			continue
		}
		converged = false
		if s.wrote || s.app.Stopped() || r.rollouts == nil {
			continue
		}
		in, err := r.rollouts.serviceRollout(render.KeyLabel(render.Key(s.ud)), d)
		if err != nil {
			return true, fmt.Errorf("observe the rollout of Deployment %s/%s: %w", d.Namespace, d.Name, err)
		}
		if b := serviceBlocked(in); b != nil {
			blockedServices = append(blockedServices, *b)
		}
	}
	s.status.ReadyReplicas = ready
	switch {
	case s.app.Stopped() && !s.wrote:
		s.summarize(v1alpha1.PhaseStopped, conditions.Current, ReasonStopped, "scaled to zero; configuration kept")
	case converged:
		s.summarize(v1alpha1.PhaseReady, conditions.Current, ReasonReady, fmt.Sprintf("%d replicas ready", ready))
	case len(blockedServices) > 0:
		reason, why, stalled := blockedSummary(blockedServices)
		msg := fmt.Sprintf("%d replicas ready; %s", ready, why)
		if stalled {
			s.fail(conditions.Stalled, reason, msg)
			return false, nil
		}
		s.summarize(v1alpha1.PhaseProvisioning, conditions.InProgress, reason, msg)
	default:
		s.summarize(v1alpha1.PhaseProvisioning, conditions.InProgress, ReasonProvisioning, fmt.Sprintf("%d replicas ready; waiting for the rollout", ready))
	}
	return false, nil
}
