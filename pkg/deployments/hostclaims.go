package deployments

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/manager"
)

// A host is an app's while it holds the host's claim, a Lease in the
// manager's own namespace: the API server admits one create of a name, so
// of two apps that want a host at the same moment exactly one gets it.
//
// +kubebuilder:rbac:namespace=opsnorth-system,groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;delete

// Annotations of a claim Lease: the host in full (the name may be a hash)
// and the holder's UID (spec.holderIdentity is its "<namespace>/<name>").
const (
	annotationClaimHost = labelkeys.Prefix + "host"
	annotationHolderUID = labelkeys.Prefix + "holder-uid"
)

// claimHolderIndex indexes the cached claims by their holder's UID.
const claimHolderIndex = "holderUID"

// claimKind caches the claim Leases, and only them, of the manager's namespace.
var claimKind = manager.KubeKind{Object: &coordinationv1.Lease{}, Resource: coordinationv1.SchemeGroupVersion.WithResource("leases"),
	Select: func(o *metav1.ListOptions) { o.LabelSelector = labelkeys.HostClaim + "=" + labelkeys.HostClaimValue },
	Indexers: toolscache.Indexers{claimHolderIndex: func(obj any) ([]string, error) {
		if l, ok := obj.(*coordinationv1.Lease); ok && l.Annotations[annotationHolderUID] != "" {
			return []string{l.Annotations[annotationHolderUID]}, nil
		}
		return nil, nil
	}}}

// maxClaimAttempts bounds one reconcile's creates of a claim whose stale
// Lease others delete and recreate meanwhile.
const maxClaimAttempts = 3

// ClaimName is the name of host's claim Lease: "host-" and the host while
// that is a valid name (at most 253 characters), else "host-" and the
// SHA-256 of the host in hex. Names of the two forms never meet: 64 hex
// digits without a dot are no host (a DNS label has at most 63 characters).
func ClaimName(host string) string {
	if name := "host-" + host; len(name) <= validation.DNS1123SubdomainMaxLength {
		return name
	}
	return "host-" + render.Hash(host, 64)
}

// hostClaims creates and deletes the claim Leases and remembers which
// deployments wait for a host another one holds.
type hostClaims struct {
	namespace string
	owner     string
	client    client.Client // creates and deletes claims
	live      client.Reader // reads claims the cache may not show yet
	cache     toolscache.Indexer
	// alive reports whether the UserDeployment namespace/name with uid
	// still holds its hosts (exists and is not being released).
	alive func(ctx context.Context, namespace, name string, uid types.UID) (bool, error)
	now   func() time.Time

	mu sync.Mutex
	// waiting are, by host, the deployments stalled on it. A deployment
	// deleted meanwhile stays until the host's claim goes: one reconcile of
	// nothing then.
	waiting map[string]map[types.NamespacedName]bool
}

// claim makes host ud's if nobody else holds it, the first create of its
// Lease deciding; a claim whose holder is gone or being released is deleted
// (on the UID and resourceVersion read) and created anew. It returns the
// holder, "<namespace>/<name>", when that is someone else.
func (c *hostClaims) claim(ctx context.Context, ud *v1alpha1.UserDeployment, host string) (string, error) {
	name, key := ClaimName(host), client.ObjectKeyFromObject(ud)
	if obj, ok, _ := c.cache.GetByKey(c.namespace + "/" + name); ok && holderUID(obj.(*coordinationv1.Lease)) == ud.UID {
		c.setWaiting(host, key, false)
		return "", nil
	}
	for range maxClaimAttempts {
		err := c.client.Create(ctx, c.lease(ud, host), client.FieldOwner(c.owner))
		if err == nil {
			c.setWaiting(host, key, false)
			return "", nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("claim host %s: %w", host, err)
		}
		// Waiting before the read, so a release after it is not missed.
		c.setWaiting(host, key, true)
		var live coordinationv1.Lease
		err = c.live.Get(ctx, client.ObjectKey{Namespace: c.namespace, Name: name}, &live)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("read the claim of host %s: %w", host, err)
		}
		if holderUID(&live) == ud.UID {
			c.setWaiting(host, key, false)
			return "", nil
		}
		holder := ptr.Deref(live.Spec.HolderIdentity, "")
		if ns, hname, ok := strings.Cut(holder, "/"); ok {
			alive, err := c.alive(ctx, ns, hname, holderUID(&live))
			if err != nil || alive {
				return holder, err
			}
		}
		if err := c.remove(ctx, &live); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("claim host %s: its Lease %s/%s changed %d times meanwhile", host, c.namespace, name, maxClaimAttempts)
}

func (c *hostClaims) lease(ud *v1alpha1.UserDeployment, host string) *coordinationv1.Lease {
	now := metav1.NewMicroTime(c.now())
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: ClaimName(host), Namespace: c.namespace,
			Labels: map[string]string{labelkeys.ManagedBy: labelkeys.ManagedByValue, labelkeys.PartOf: labelkeys.PartOfValue,
				labelkeys.HostClaim: labelkeys.HostClaimValue, labelkeys.UserDeployment: render.KeyLabel(render.Key(ud))},
			Annotations: map[string]string{annotationClaimHost: host, annotationHolderUID: string(ud.UID)}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(ud.Namespace + "/" + ud.Name), AcquireTime: &now},
	}
}

func holderUID(l *coordinationv1.Lease) types.UID {
	return types.UID(l.Annotations[annotationHolderUID])
}

// held lists the claims ud holds: cached, or live while it is deleted, so
// a claim created a moment ago is not left behind.
func (c *hostClaims) held(ctx context.Context, ud *v1alpha1.UserDeployment, live bool) ([]*coordinationv1.Lease, error) {
	var out []*coordinationv1.Lease
	if !live {
		objs, err := c.cache.ByIndex(claimHolderIndex, string(ud.UID))
		if err != nil {
			return nil, fmt.Errorf("list the host claims of %s: %w", render.Key(ud), err)
		}
		for _, o := range objs {
			out = append(out, o.(*coordinationv1.Lease))
		}
		return out, nil
	}
	var list coordinationv1.LeaseList
	if err := c.live.List(ctx, &list, client.InNamespace(c.namespace), client.MatchingLabels{
		labelkeys.HostClaim: labelkeys.HostClaimValue, labelkeys.UserDeployment: render.KeyLabel(render.Key(ud))}); err != nil {
		return nil, fmt.Errorf("list the host claims of %s: %w", render.Key(ud), err)
	}
	for i := range list.Items {
		if holderUID(&list.Items[i]) == ud.UID {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// remove deletes claim l as it was read: gone or changed meanwhile, it is
// not this caller's to delete any more.
func (c *hostClaims) remove(ctx context.Context, l *coordinationv1.Lease) error {
	err := c.client.Delete(ctx, l, client.Preconditions{UID: &l.UID, ResourceVersion: &l.ResourceVersion})
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return fmt.Errorf("delete the claim of host %s: %w", l.Annotations[annotationClaimHost], err)
}

func (c *hostClaims) setWaiting(host string, key types.NamespacedName, waiting bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !waiting {
		delete(c.waiting[host], key)
		return
	}
	if c.waiting[host] == nil {
		c.waiting[host] = map[types.NamespacedName]bool{}
	}
	c.waiting[host][key] = true
}

// handler enqueues, when a claim goes, the deployments waiting for its host,
// so one takes it over at once rather than at its next look (hostConflictRetry).
func (c *hostClaims) handler() handler.EventHandler {
	return handler.Funcs{DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		host := e.Object.GetAnnotations()[annotationClaimHost]
		c.mu.Lock()
		defer c.mu.Unlock()
		for key := range c.waiting[host] {
			q.Add(reconcile.Request{NamespacedName: key})
		}
		delete(c.waiting, host)
	}}
}
