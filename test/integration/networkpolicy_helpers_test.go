package integration

import (
	"net/netip"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/resource"
)

// egressAllowsIP reports whether the policy lets a selected pod send to addr
// (on some port) through an ipBlock peer. Peers that select pods match pods,
// not addresses, and are left out; a rule without peers allows every
// address, and so does a policy that does not limit egress. Addresses keep
// their family (net/netip): an IPv4-mapped IPv6 address is matched against
// IPv6 blocks only.
func egressAllowsIP(t *testing.T, np *networkingv1.NetworkPolicy, addr netip.Addr) bool {
	t.Helper()
	if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
		return true
	}
	for _, rule := range np.Spec.Egress {
		if len(rule.To) == 0 {
			return true
		}
		for _, peer := range rule.To {
			if peer.IPBlock != nil && ipBlockAllows(t, *peer.IPBlock, addr) {
				return true
			}
		}
	}
	return false
}

func ipBlockAllows(t *testing.T, block networkingv1.IPBlock, addr netip.Addr) bool {
	t.Helper()
	if !parsePrefix(t, block.CIDR).Contains(addr) {
		return false
	}
	for _, e := range block.Except {
		if parsePrefix(t, e).Contains(addr) {
			return false
		}
	}
	return true
}

func parsePrefix(t *testing.T, s string) netip.Prefix {
	t.Helper()
	p, err := netip.ParsePrefix(s)
	require.NoError(t, err, "CIDR %q", s)
	return p
}

func ipBlocks(np *networkingv1.NetworkPolicy) []networkingv1.IPBlock {
	var out []networkingv1.IPBlock
	for _, rule := range np.Spec.Egress {
		for _, peer := range rule.To {
			if peer.IPBlock != nil {
				out = append(out, *peer.IPBlock)
			}
		}
	}
	return out
}

// taskNetworkPolicy is the policy the all-in-one overlay ships.
func taskNetworkPolicy(t *testing.T) *networkingv1.NetworkPolicy {
	t.Helper()
	policies := networkPolicies(renderResources(t, filepath.Join(repoRoot(t), "kustomize", "overlays", "all-in-one")))
	require.Len(t, policies, 1)
	m, err := policies[0].Map()
	require.NoError(t, err)
	var np networkingv1.NetworkPolicy
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(m, &np, true))
	return &np
}

func networkPolicies(rs []*resource.Resource) []*resource.Resource {
	var out []*resource.Resource
	for _, r := range rs {
		if r.GetKind() == "NetworkPolicy" {
			out = append(out, r)
		}
	}
	return out
}

// warningRecorder keeps the warnings the apiserver sends back.
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

func (w *warningRecorder) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.warnings)
}
