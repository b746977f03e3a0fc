package deployments

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/render"
)

const (
	claimsNS = "opsnorth-system"
	host     = "app.apps.example.com"
)

func hostsUD(ns, name string) *v1alpha1.UserDeployment {
	return &v1alpha1.UserDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name)},
		Spec: v1alpha1.UserDeploymentSpec{UserID: "u", Image: "img", ContainerPort: ptr.To[int32](80), DesiredState: v1alpha1.DesiredRunning}}
}

// claimsReconciler is a Reconciler whose claims live in a fake API server
// holding leases, cached as far as cached says; holders are the
// UserDeployments that exist.
func claimsReconciler(t *testing.T, leases []*coordinationv1.Lease, cached bool, holders ...*v1alpha1.UserDeployment) (*Reconciler, client.Client) {
	t.Helper()
	objs := make([]client.Object, 0, len(leases))
	cache := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, claimKind.Indexers)
	for _, l := range leases {
		objs = append(objs, l)
		if cached {
			require.NoError(t, cache.Add(l))
		}
	}
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(objs...).Build()
	alive := func(_ context.Context, ns, name string, uid types.UID) (bool, error) {
		for _, ud := range holders {
			if ud.Namespace == ns && ud.Name == name && ud.UID == uid {
				return !releasing(ud), nil
			}
		}
		return false, nil
	}
	claims := &hostClaims{namespace: claimsNS, owner: "test", client: c, live: c, cache: cache, alive: alive, now: time.Now,
		waiting: map[string]map[types.NamespacedName]bool{}}
	r := &Reconciler{cfg: Config{Options: render.Options{Domain: "apps.example.com"}, ReservedHosts: DefaultReservedHosts}, claims: claims}
	return r, c
}

func claimOf(t *testing.T, ud *v1alpha1.UserDeployment, h string) *coordinationv1.Lease {
	t.Helper()
	r, _ := claimsReconciler(t, nil, false)
	l := r.claims.lease(ud, h)
	l.UID, l.ResourceVersion = types.UID("lease-"+ud.Name), "1"
	return l
}

func TestCheckHosts(t *testing.T) {
	me, other := hostsUD("a", "app"), hostsUD("b", "app")
	gone := other.DeepCopy()
	gone.Spec.DesiredState = v1alpha1.DesiredDeleted
	tests := []struct {
		name     string
		leases   []*coordinationv1.Lease
		cached   bool
		holders  []*v1alpha1.UserDeployment
		conflict bool
	}{
		{name: "free host"},
		{name: "held by me, cached", leases: []*coordinationv1.Lease{claimOf(t, me, host)}, cached: true},
		{name: "held by me, not cached yet", leases: []*coordinationv1.Lease{claimOf(t, me, host)}},
		{name: "held by another", leases: []*coordinationv1.Lease{claimOf(t, other, host)}, holders: []*v1alpha1.UserDeployment{other}, conflict: true},
		{name: "held by another, cached", leases: []*coordinationv1.Lease{claimOf(t, other, host)}, cached: true,
			holders: []*v1alpha1.UserDeployment{other}, conflict: true},
		{name: "holder gone: taken over", leases: []*coordinationv1.Lease{claimOf(t, other, host)}, cached: true},
		{name: "holder being deleted: taken over", leases: []*coordinationv1.Lease{claimOf(t, other, host)}, holders: []*v1alpha1.UserDeployment{gone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, c := claimsReconciler(t, tt.leases, tt.cached, tt.holders...)
			services, err := render.Services(me, nil)
			require.NoError(t, err)
			s := &scope{ud: me, app: &render.App{UD: me, Services: services}}
			stop, err := r.checkHosts(t.Context(), s)
			require.NoError(t, err)
			assert.Equal(t, tt.conflict, stop)
			var live coordinationv1.Lease
			require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: claimsNS, Name: "host-" + host}, &live))
			waiting := r.claims.waiting[host][client.ObjectKeyFromObject(me)]
			if tt.conflict {
				assert.Equal(t, v1alpha1.PhaseError, s.status.Phase)
				assert.Equal(t, "host already in use: "+host+" (used by b/app)", s.status.LastError)
				assert.Empty(t, s.app.Hosts)
				assert.Equal(t, hostConflictRetry, s.requeue, "the holder may let go: look again")
				assert.Equal(t, other.UID, holderUID(&live), "the holder keeps its claim")
				assert.True(t, waiting, "a release enqueues it")
				return
			}
			require.Len(t, s.app.Hosts, 1)
			assert.Equal(t, host, s.app.Hosts[0].Host)
			assert.Zero(t, s.requeue)
			assert.Equal(t, me.UID, holderUID(&live))
			assert.Equal(t, "a/app", ptr.Deref(live.Spec.HolderIdentity, ""))
			assert.Equal(t, host, live.Annotations[annotationClaimHost])
			assert.False(t, waiting)
		})
	}
}

func TestCheckHostsReserved(t *testing.T) {
	r, c := claimsReconciler(t, nil, false)
	ud := hostsUD("a", "www")
	services, err := render.Services(ud, nil)
	require.NoError(t, err)
	s := &scope{ud: ud, app: &render.App{UD: ud, Services: services}}
	stop, err := r.checkHosts(t.Context(), s)
	assert.True(t, stop)
	var st *stalledError
	require.ErrorAs(t, err, &st)
	assert.Equal(t, ReasonHostReserved, st.reason)
	assert.Equal(t, `metadata.name "www" makes host www.apps.example.com, whose first label is reserved`, st.msg)
	var leases coordinationv1.LeaseList
	require.NoError(t, c.List(t.Context(), &leases))
	assert.Empty(t, leases.Items, "a reserved host is never claimed")
}

func TestReleaseHostClaims(t *testing.T) {
	me, other := hostsUD("a", "app"), hostsUD("b", "app")
	kept, dropped, foreign := claimOf(t, me, host), claimOf(t, me, "app-admin.apps.example.com"), claimOf(t, other, "b.apps.example.com")
	dropped.UID, foreign.UID = "lease-dropped", "lease-foreign"
	for _, tt := range []struct {
		name string
		ud   *v1alpha1.UserDeployment
		want []string
	}{
		{name: "a host no longer served", ud: me, want: []string{kept.Name, foreign.Name}},
		{name: "deleted: every claim of its own", ud: func() *v1alpha1.UserDeployment {
			d := me.DeepCopy()
			d.DeletionTimestamp = ptr.To(metav1.Now())
			return d
		}(), want: []string{foreign.Name}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, c := claimsReconciler(t, []*coordinationv1.Lease{kept.DeepCopy(), dropped.DeepCopy(), foreign.DeepCopy()}, true)
			s := &scope{ud: tt.ud, app: &render.App{UD: tt.ud, Hosts: []v1alpha1.IngressStatus{{Host: host}}}}
			stop, err := r.releaseHostClaims(t.Context(), s)
			require.NoError(t, err)
			assert.False(t, stop)
			var leases coordinationv1.LeaseList
			require.NoError(t, c.List(t.Context(), &leases))
			var names []string
			for _, l := range leases.Items {
				names = append(names, l.Name)
			}
			assert.ElementsMatch(t, tt.want, names)
		})
	}
}

func TestClaimReleaseEnqueuesWaiters(t *testing.T) {
	r, _ := claimsReconciler(t, nil, false)
	waiter := types.NamespacedName{Namespace: "b", Name: "app"}
	r.claims.setWaiting(host, waiter, true)
	r.claims.setWaiting("other.apps.example.com", types.NamespacedName{Namespace: "c", Name: "other"}, true)
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	r.claims.handler().Delete(t.Context(), event.DeleteEvent{Object: claimOf(t, hostsUD("a", "app"), host)}, q)
	require.Equal(t, 1, q.Len())
	got, _ := q.Get()
	assert.Equal(t, reconcile.Request{NamespacedName: waiter}, got)
	assert.Empty(t, r.claims.waiting[host], "enqueued once: a waiter still stalled waits anew")
}

func TestClaimName(t *testing.T) {
	long := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "."
	for _, tt := range []struct {
		name, host, want string
	}{
		{name: "a host that fits", host: "shop.apps.example.com", want: "host-shop.apps.example.com"},
		{name: "253 characters with the prefix", host: long + strings.Repeat("d", 56), want: "host-" + long + strings.Repeat("d", 56)},
		{name: "longer: hashed", host: long + strings.Repeat("d", 57), want: "host-" + render.Hash(long+strings.Repeat("d", 57), 64)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ClaimName(tt.host))
			assert.Empty(t, validation.IsDNS1123Subdomain(ClaimName(tt.host)), "a valid Lease name")
		})
	}
	assert.NotEqual(t, ClaimName(long+strings.Repeat("d", 57)), ClaimName(long+strings.Repeat("e", 57)), "distinct hosts, distinct claims")
}
