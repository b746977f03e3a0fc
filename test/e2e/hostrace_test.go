//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

var ingressRoutes = schema.GroupVersionResource{Group: "traefik.io", Version: "v1alpha1", Resource: "ingressroutes"}

// hostRounds is how many times two users race for one host.
const hostRounds = 20

// TestHostRace: in each round two users create, at the same moment, an app
// of the same name, so both want one host. The API server decides: exactly
// one gets a route for it, the other stalls with HostConflict naming the
// winner, round after round.
func TestHostRace(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	nsA, nsB := newNamespace(t, c), newNamespace(t, c)
	stamp := time.Now().Unix() % 100000
	for round := range hostRounds {
		name := fmt.Sprintf("race-%d-%02d", stamp, round)
		host := name + ".apps.localtest.me"
		var wg sync.WaitGroup
		for i, ns := range []string{nsA, nsB} {
			wg.Go(func() {
				_, err := cs.SchedulerV1alpha1().UserDeployments(ns).Create(t.Context(),
					userDeployment(ns, name, fmt.Sprintf("e2e-race-%d-%d", stamp, i)), metav1.CreateOptions{})
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		var winners, losers []string
		require.Eventually(t, func() bool {
			winners, losers = nil, nil
			for _, ns := range []string{nsA, nsB} {
				ud, err := cs.SchedulerV1alpha1().UserDeployments(ns).Get(t.Context(), name, metav1.GetOptions{})
				if err != nil {
					return false
				}
				ready := meta.FindStatusCondition(ud.Status.Conditions, v1alpha1.ConditionReady)
				switch {
				case ready != nil && ready.Reason == "HostConflict":
					losers = append(losers, ns+": "+ready.Message)
				case len(ud.Status.Ingresses) == 1 && ud.Status.Ingresses[0].Host == host:
					winners = append(winners, ns)
				}
			}
			return len(winners)+len(losers) == 2
		}, timeout, tick, "round %d: both apps settle", round)
		require.Len(t, winners, 1, "round %d: one app holds %s (losers %v)", round, host, losers)
		assert.Equal(t, []string{otherOf(winners[0], nsA, nsB) + ": host already in use: " + host + " (used by " + winners[0] + "/" + name + ")"},
			losers, "round %d", round)
		assert.Equal(t, 1, routesFor(t, host), "round %d: one route for %s", round, host)
	}
}

func otherOf(ns, a, b string) string {
	if ns == a {
		return b
	}
	return a
}

// routesFor counts the IngressRoutes in the cluster that match host.
func routesFor(t *testing.T, host string) int {
	t.Helper()
	list, err := requireCluster(t).Dynamic.Resource(ingressRoutes).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	n := 0
	for _, r := range list.Items {
		routes, _, _ := unstructured.NestedSlice(r.Object, "spec", "routes")
		for _, route := range routes {
			if m, ok := route.(map[string]any); ok && strings.Contains(fmt.Sprint(m["match"]), "Host(`"+host+"`)") {
				n++
			}
		}
	}
	return n
}
