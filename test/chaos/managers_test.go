//go:build chaos

package chaos

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/pkg/localcluster"
)

// isLeader reports whether the manager's /metrics shows it holding its
// Lease (leader_election_master_status 1). A manager that does not answer
// is not the leader.
func isLeader(ctx context.Context, m *localcluster.Manager) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m.MetricsAddr+"/metrics", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "leader_election_master_status{") && strings.HasSuffix(line, " 1") {
			return true
		}
	}
	return false
}

// running returns the replicas of component whose process still runs.
func running(component string) []*localcluster.Manager {
	var out []*localcluster.Manager
	for _, m := range replicas[component] {
		if !m.Process.Exited() {
			out = append(out, m)
		}
	}
	return out
}

// leader waits until exactly one running replica of component leads and returns it.
func leader(t *testing.T, component string) *localcluster.Manager {
	t.Helper()
	var found *localcluster.Manager
	require.Eventually(t, func() bool {
		found = nil
		n := 0
		for _, m := range running(component) {
			if isLeader(t.Context(), m) {
				found, n = m, n+1
			}
		}
		return n == 1
	}, 60*time.Second, 200*time.Millisecond, "exactly one %s replica leads", component)
	return found
}

// leaseHolder returns the holder identity of component's Lease.
func leaseHolder(ctx context.Context, component string) string {
	l, err := cluster.Clientset.CoordinationV1().Leases(localcluster.ManagerNamespace).Get(ctx, component+".scheduler.opsnorth.io", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// handover is one leader change: who led, who took over, and how long after
// the signal the new leader's metrics showed it leading.
type handover struct {
	Component string  `json:"component"`
	Signal    string  `json:"signal"`
	From      string  `json:"from"`
	To        string  `json:"to"`
	Seconds   float64 `json:"seconds"`
	OldHolder string  `json:"oldLeaseHolder"`
	NewHolder string  `json:"newLeaseHolder"`
}

// signalLeader sends sig to the process group of old, component's leader,
// and measures until another running replica leads. It may run in a
// goroutine of its own: it reports failures with Errorf.
func signalLeader(t *testing.T, component string, old *localcluster.Manager, sig syscall.Signal) handover {
	t.Helper()
	h := handover{Component: component, Signal: sig.String(), From: old.Process.Name, OldHolder: leaseHolder(t.Context(), component)}
	start := time.Now()
	if err := syscall.Kill(-old.Process.PID(), sig); err != nil {
		t.Errorf("signal %s: %v", old.Process.Name, err)
		return h
	}
	deadline := start.Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range replicas[component] {
			if m != old && !m.Process.Exited() && isLeader(t.Context(), m) {
				h.Seconds = time.Since(start).Seconds()
				h.To = m.Process.Name
				h.NewHolder = leaseHolder(t.Context(), component)
				assert.Eventually(t, old.Process.Exited, 40*time.Second, 100*time.Millisecond, "%s exits after %s", old.Process.Name, sig)
				t.Logf("%s: %s %s → %s led after %.2fs (lease %q → %q)", component, sig, h.From, h.To, h.Seconds, h.OldHolder, h.NewHolder)
				return h
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("%s: no replica took over within 60s of %s to %s", component, sig, old.Process.Name)
	return h
}

// addReplica starts one more replica of component named <component>-<suffix>.
func addReplica(t *testing.T, component, suffix string) {
	t.Helper()
	bin := filepath.Join(cluster.Dir, "bin", component)
	m, err := cluster.StartManager(t.Context(), fmt.Sprintf("%s-%s", component, suffix), component, bin)
	require.NoError(t, err)
	replicas[component] = append(replicas[component], m)
}
