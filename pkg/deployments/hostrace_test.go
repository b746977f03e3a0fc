package deployments_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
)

// handover bounds how long a loser waits once the host's claim goes: well
// under the minute of its periodic look, so only the claim's watch meets it.
const handover = 20 * time.Second

// claimOf reads host's claim Lease; nil when there is none.
func claimOf(t *testing.T, c client.Client, host string) *coordinationv1.Lease {
	t.Helper()
	var l coordinationv1.Lease
	err := c.Get(context.Background(), client.ObjectKey{Namespace: testkit.ManagerNamespace, Name: deployments.ClaimName(host)}, &l)
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(t, err)
	return &l
}

// TestHostClaimRace: two users' apps of one name, so of one host, reconciled
// at the same moment (both exist when the manager starts). The API server
// decides: one holds the host's claim and gets its route, the other stalls
// naming it. Deleting the winner deletes its claim, and the loser takes the
// host at once.
func TestHostClaimRace(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	nsA, nsB := newNamespace(t, c), newNamespace(t, c)
	users := map[string]string{nsA: userID("kim"), nsB: userID("lee")}
	for ns, user := range users {
		require.NoError(t, c.Create(ctx, rawUD(ns, "market", user)))
	}
	startManager(t, testkit.ManagerConfig(t, testenv.Require(t), "deployments"), nsA+","+nsB)
	host := "market." + domain

	var winner, loser *v1alpha1.UserDeployment
	require.Eventually(t, func() bool {
		winner, loser = nil, nil
		for ns := range users {
			ud := getUD(t, c, ns, "market")
			switch {
			case ud.Status.ObservedGeneration != ud.Generation:
			case ud.Status.Phase == v1alpha1.PhaseProvisioning:
				winner = ud
			case ud.Status.Phase == v1alpha1.PhaseError:
				loser = ud
			}
		}
		return winner != nil && loser != nil
	}, wait, 200*time.Millisecond, "one app provisions, the other stalls")

	assert.Equal(t, []v1alpha1.IngressStatus{{Service: "app", Host: host, URL: "https://" + host, Visibility: "public"}}, winner.Status.Ingresses)
	waitObject(t, c, render.GVKIngressRoute, "user-"+users[winner.Namespace], "market-app", nil)
	conflict := "host already in use: " + host + " (used by " + winner.Namespace + "/market)"
	assert.Equal(t, "False/HostConflict: "+conflict, condition(loser, "IngressReady"))
	assert.Equal(t, "True/HostConflict: "+conflict, condition(loser, v1alpha1.ConditionStalled))
	assert.Empty(t, loser.Status.Ingresses)
	err := c.Get(ctx, client.ObjectKey{Name: "user-" + users[loser.Namespace]}, &corev1.Namespace{})
	assert.True(t, apierrors.IsNotFound(err), "nothing of the loser is created: %v", err)
	claim := claimOf(t, c, host)
	require.NotNil(t, claim)
	assert.Equal(t, winner.Namespace+"/market", ptr.Deref(claim.Spec.HolderIdentity, ""))
	assert.Equal(t, string(winner.UID), claim.Annotations["scheduler.opsnorth.io/holder-uid"])

	deleteUD(t, c, winner.Namespace, "market")
	gone := time.Now()
	assert.Eventually(t, func() bool {
		l := claimOf(t, c, host)
		return l == nil || l.UID != claim.UID
	}, wait, 100*time.Millisecond, "the winner's claim goes with it")
	require.Eventually(t, func() bool {
		ud := getUD(t, c, loser.Namespace, "market")
		return ud.Status.Phase == v1alpha1.PhaseProvisioning && len(ud.Status.Ingresses) == 1
	}, handover, 100*time.Millisecond, "the loser takes the host when its claim goes")
	t.Logf("handover in %s", time.Since(gone).Round(time.Millisecond))
	claim = claimOf(t, c, host)
	require.NotNil(t, claim)
	assert.Equal(t, loser.Namespace+"/market", ptr.Deref(claim.Spec.HolderIdentity, ""))
	waitObject(t, c, render.GVKIngressRoute, "user-"+users[loser.Namespace], "market-app", nil)
}

// TestHostReserved: where no admission policy refuses it, the manager itself
// refuses an app whose host's first label is reserved, claiming nothing.
func TestHostReserved(t *testing.T) {
	c := newClient(t)
	ns := newNamespace(t, c)
	startManager(t, testenv.Require(t).Config, ns)
	user := userID("max")
	require.NoError(t, c.Create(context.Background(), rawUD(ns, "www", user)))
	got := waitPhase(t, c, ns, "www", v1alpha1.PhaseError)
	msg := `metadata.name "www" makes host www.` + domain + `, whose first label is reserved`
	assert.Equal(t, "True/HostReserved: "+msg, condition(got, v1alpha1.ConditionStalled))
	assert.Equal(t, "False/HostReserved: "+msg, condition(got, "IngressReady"))
	assert.Nil(t, claimOf(t, c, "www."+domain), "a reserved host is never claimed")
	assert.Empty(t, managedObjects(t, c, user), "nothing of it is created")
}
