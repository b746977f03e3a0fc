package deployments

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/conditions"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/manager"
)

// hostConflictRetry is how often a deployment stalled on a host another one
// holds looks again, besides when the host's claim goes (hostClaims.handler).
const hostConflictRetry = time.Minute

// checkHosts refuses hosts whose first label is reserved, then claims each
// host (hostClaims.claim): one another deployment holds stalls this one.
func (r *Reconciler) checkHosts(ctx context.Context, s *scope) (bool, error) {
	hosts := render.Hosts(s.ud, s.app.Services, r.cfg.Domain)
	if msg := reservedHost(s.ud, hosts, r.cfg.ReservedHosts); msg != "" {
		s.setCondition(ConditionIngressReady, metav1.ConditionFalse, ReasonHostReserved, msg)
		return true, stalled(ReasonHostReserved, msg)
	}
	var conflicts []string
	for _, h := range hosts {
		holder, err := r.claims.claim(ctx, s.ud, h.Host)
		if err != nil {
			return true, err
		}
		if holder != "" {
			conflicts = append(conflicts, fmt.Sprintf("%s (used by %s)", h.Host, holder))
		}
	}
	if len(conflicts) > 0 {
		msg := "host already in use: " + strings.Join(conflicts, ", ")
		s.setCondition(ConditionIngressReady, metav1.ConditionFalse, ReasonHostConflict, msg)
		s.fail(conditions.Stalled, ReasonHostConflict, msg)
		s.requeue = hostConflictRetry
		return true, nil
	}
	s.app.Hosts = hosts
	msg := "no exposed service"
	if len(hosts) > 0 {
		msg = "serving " + hosts[0].URL
	}
	s.setCondition(ConditionIngressReady, metav1.ConditionTrue, ReasonHostsAssigned, msg)
	return false, nil
}

// releaseHostClaims deletes the claims of the hosts the deployment no longer
// serves, once their routes are gone: after pruneChildren, or after
// deleteChildren, when it serves none.
func (r *Reconciler) releaseHostClaims(ctx context.Context, s *scope) (bool, error) {
	keep := map[string]bool{}
	if !releasing(s.ud) && s.app != nil {
		for _, h := range s.app.Hosts {
			keep[h.Host] = true
		}
	}
	claims, err := r.claims.held(ctx, s.ud, releasing(s.ud))
	if err != nil {
		return true, err
	}
	for _, l := range claims {
		if keep[l.Annotations[annotationClaimHost]] {
			continue
		}
		if err := r.claims.remove(ctx, l); err != nil {
			return true, err
		}
	}
	return false, nil
}

// releasing reports whether ud gives up its hosts and children.
func releasing(ud *v1alpha1.UserDeployment) bool {
	return ud.DeletionTimestamp != nil || ud.Spec.DesiredState == v1alpha1.DesiredDeleted
}

// holderAlive reports whether the UserDeployment namespace/name with uid
// still holds its hosts: seen so in the cache, else confirmed live, so that
// a holder created a moment ago is not taken for gone.
func (r *Reconciler) holderAlive(ctx context.Context, namespace, name string, uid types.UID) (bool, error) {
	if f := r.informers.For(namespace); f != nil {
		ud, err := f.Scheduler().V1alpha1().UserDeployments().Lister().UserDeployments(namespace).Get(name)
		if err == nil && ud.UID == uid && !releasing(ud) {
			return true, nil
		}
	}
	ud, err := r.clientset.SchedulerV1alpha1().UserDeployments(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get UserDeployment %s/%s, holder of a host: %w", namespace, name, err)
	}
	return ud.UID == uid && !releasing(ud), nil
}

// setupHostClaims caches the claim Leases of the manager's own namespace;
// the source it returns enqueues who waits for a claim that goes.
func (r *Reconciler) setupHostClaims(deps *manager.Deps) (source.Source, error) {
	inf, err := deps.Kube.InNamespace(claimKind, deps.Options.OwnNamespace())
	if err != nil {
		return nil, err
	}
	r.claims = &hostClaims{namespace: deps.Options.OwnNamespace(), owner: deps.FieldOwner, client: deps.Manager.GetClient(),
		live: deps.Manager.GetAPIReader(), cache: inf.GetIndexer(), alive: r.holderAlive, now: r.now,
		waiting: map[string]map[types.NamespacedName]bool{}}
	return manager.Watch(inf, r.claims.handler()), nil
}
