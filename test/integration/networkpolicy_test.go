package integration

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kustomize/api/resource"

	"opsnorth.io/scheduler/pkg/testenv"
)

// The default NetworkPolicy of agent pods: kustomize/components/task-network-policy.
const (
	taskNetworkPolicyComponent = "task-network-policy"
	taskNetworkPolicyName      = "opsnorth-scheduler-agent-pods"
	taskNamespace              = "agent-tasks"
)

// taskNetworkPolicyGolden is the rendered policy, the same in every overlay
// that ships it.
const taskNetworkPolicyGolden = "task-network-policy.golden.yaml"

// TestTaskNetworkPolicyOverlays checks which overlays ship the policy and
// that what they ship is the reviewed golden file
// (testdata/task-network-policy.golden.yaml; -update rewrites it).
func TestTaskNetworkPolicyOverlays(t *testing.T) {
	root := repoRoot(t)
	for _, o := range []struct {
		name string
		want bool
	}{
		{name: "all-in-one", want: true},
		// The policy goes with the namespace it guards, in the cluster unit:
		// agent pods outlive an uninstalled tasks manager, so no manager's
		// overlay may take it away with it.
		{name: "cluster", want: true},
		{name: "tasks", want: false},
		{name: "deployments", want: false},
		{name: "workflows", want: false},
	} {
		t.Run(o.name, func(t *testing.T) {
			policies := networkPolicies(renderResources(t, filepath.Join(root, "kustomize", "overlays", o.name)))
			if !o.want {
				assert.Empty(t, policies, "overlay %s ships a NetworkPolicy", o.name)
				return
			}
			require.Len(t, policies, 1, "overlay %s ships exactly the task namespace's policy", o.name)
			res := policies[0]
			assert.Equal(t, taskNamespace, res.GetNamespace())
			assert.Equal(t, taskNetworkPolicyName, res.GetName())
			doc, err := res.AsYAML()
			require.NoError(t, err)
			// Both overlays ship the same object; only one writes under -update.
			if o.name == "all-in-one" || !*update {
				assertGolden(t, taskNetworkPolicyGolden, doc)
			}
		})
	}
}

// TestTaskNetworkPolicyDroppable drops the component from the all-in-one
// overlay and the cluster unit, as a platform with its own network policies
// would, and checks that only the policy goes.
func TestTaskNetworkPolicyDroppable(t *testing.T) {
	root := repoRoot(t)
	for _, name := range []string{"all-in-one", "cluster"} {
		t.Run(name, func(t *testing.T) {
			overlay := filepath.Join(root, "kustomize", "overlays", name)
			with := renderResources(t, overlay)
			without := renderResources(t, withoutComponent(t, overlay, taskNetworkPolicyComponent))
			assert.Empty(t, networkPolicies(without), "NetworkPolicy left after dropping the component")
			assert.Len(t, without, len(with)-1, "dropping the component removes only the policy")
			ids := func(rs []*resource.Resource) []string {
				var out []string
				for _, r := range rs {
					if r.GetKind() != "NetworkPolicy" {
						out = append(out, r.CurId().String())
					}
				}
				return out
			}
			assert.Equal(t, ids(with), ids(without))
		})
	}
}

// TestTaskNetworkPolicyRules reads the shipped policy as a user would:
// nothing may connect to an agent pod, and agent pods reach DNS and the public
// internet but not metadata, private, CGNAT or link-local addresses.
func TestTaskNetworkPolicyRules(t *testing.T) {
	np := taskNetworkPolicy(t)

	t.Run("every pod, both directions", func(t *testing.T) {
		assert.Equal(t, taskNamespace, np.Namespace)
		assert.Empty(t, np.Spec.PodSelector.MatchLabels, "selects every pod of the namespace")
		assert.Empty(t, np.Spec.PodSelector.MatchExpressions, "selects every pod of the namespace")
		assert.ElementsMatch(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}, np.Spec.PolicyTypes)
		assert.Empty(t, np.Spec.Ingress, "no ingress rule: nothing may connect to an agent pod")
		for i, rule := range np.Spec.Egress {
			assert.NotEmpty(t, rule.To, "egress rule %d without peers allows every destination", i)
		}
	})

	t.Run("DNS only to kube-dns", func(t *testing.T) {
		var dns []networkingv1.NetworkPolicyEgressRule
		for _, rule := range np.Spec.Egress {
			for _, peer := range rule.To {
				if peer.IPBlock == nil {
					dns = append(dns, rule)
					break
				}
			}
		}
		require.Len(t, dns, 1, "one rule selects pods: the DNS one")
		rule := dns[0]
		// One peer with both selectors (they AND), not two peers (they OR,
		// which would open all of kube-system or any pod labelled kube-dns).
		require.Len(t, rule.To, 1)
		peer := rule.To[0]
		require.NotNil(t, peer.NamespaceSelector)
		require.NotNil(t, peer.PodSelector)
		assert.Equal(t, map[string]string{"kubernetes.io/metadata.name": "kube-system"}, peer.NamespaceSelector.MatchLabels)
		assert.Empty(t, peer.NamespaceSelector.MatchExpressions)
		assert.Equal(t, map[string]string{"k8s-app": "kube-dns"}, peer.PodSelector.MatchLabels)
		assert.Empty(t, peer.PodSelector.MatchExpressions)
		var ports []string
		for _, p := range rule.Ports {
			require.NotNil(t, p.Protocol)
			require.NotNil(t, p.Port)
			assert.Nil(t, p.EndPort)
			ports = append(ports, string(*p.Protocol)+"/"+p.Port.String())
		}
		assert.ElementsMatch(t, []string{"UDP/53", "TCP/53"}, ports)
	})

	t.Run("addresses", func(t *testing.T) {
		for _, tc := range []struct {
			addr    string
			allowed bool
			what    string
		}{
			{"8.8.8.8", true, "public DNS resolver"},
			{"140.82.112.3", true, "github.com"},
			{"2001:4860:4860::8888", true, "public IPv6"},
			{"2606:4700:4700::1111", true, "public IPv6"},
			{"64:ff9b::808:808", true, "8.8.8.8 through NAT64 on an IPv6-only cluster"},

			{"169.254.169.254", false, "cloud metadata (AWS, GCP, Azure, OCI)"},
			{"169.254.170.23", false, "EKS Pod Identity credentials"},
			{"169.254.20.10", false, "NodeLocal DNSCache (hostNetwork): needs a patch where used"},
			{"fd00:ec2::254", false, "AWS metadata over IPv6"},
			{"fd20:ce::254", false, "GCP metadata over IPv6"},
			{"100.100.100.200", false, "Alibaba Cloud metadata"},
			{"192.0.0.192", false, "Oracle Cloud legacy metadata"},
			{"10.0.0.1", false, "private"},
			{"10.96.0.1", false, "kubernetes Service (kubeadm)"},
			{"172.20.0.1", false, "kubernetes Service (EKS)"},
			{"100.64.0.1", false, "CGNAT"},
			{"192.168.1.1", false, "private"},
			{"127.0.0.1", false, "loopback"},
			{"0.0.0.0", false, "this network"},
			{"198.18.0.1", false, "benchmarking"},
			{"224.0.0.251", false, "multicast (mDNS)"},
			{"240.0.0.1", false, "reserved (GKE class E pod ranges)"},
			{"255.255.255.255", false, "broadcast"},
			{"::1", false, "IPv6 loopback"},
			{"fe80::1", false, "IPv6 link-local"},
			{"fd12:3456::1", false, "unique local"},
			{"ff02::1", false, "IPv6 multicast"},
			{"::ffff:10.0.0.1", false, "IPv4-mapped private"},
			{"::ffff:169.254.169.254", false, "IPv4-mapped metadata"},
			{"::ffff:0:a00:1", false, "IPv4-translated 10.0.0.1"},
			{"64:ff9b::a9fe:a9fe", false, "metadata through NAT64"},
			{"64:ff9b::a60:1", false, "10.96.0.1 through NAT64"},
			{"64:ff9b::6440:1", false, "100.64.0.1 through NAT64"},
			{"64:ff9b:1::808:808", false, "local-use NAT64"},
		} {
			addr := netip.MustParseAddr(tc.addr)
			assert.Equal(t, tc.allowed, egressAllowsIP(t, np, addr), "%s (%s)", tc.addr, tc.what)
			if addr.Is4In6() {
				// A pod's kernel sends to ::ffff:a.b.c.d over IPv4.
				assert.Equal(t, tc.allowed, egressAllowsIP(t, np, addr.Unmap()), "%s (%s) as IPv4", tc.addr, tc.what)
			}
		}
	})

	// What the apiserver checks too (TestTaskNetworkPolicyApplies), here
	// without a control plane.
	t.Run("CIDRs the apiserver accepts", func(t *testing.T) {
		for _, block := range ipBlocks(np) {
			cidr := parsePrefix(t, block.CIDR)
			for _, s := range append([]string{block.CIDR}, block.Except...) {
				p := parsePrefix(t, s)
				assert.Equal(t, p.Masked().String(), s, "%s is not in canonical form", s)
				assert.False(t, p.Addr().Is4In6(), "%s: the apiserver refuses IPv4-mapped CIDRs", s)
			}
			for _, e := range block.Except {
				p := parsePrefix(t, e)
				assert.True(t, p.Bits() > cidr.Bits() && cidr.Contains(p.Addr()), "except %s is not a strict subset of %s", e, block.CIDR)
			}
		}
	})

	t.Run("NAT64 refuses what IPv4 refuses", func(t *testing.T) {
		var v4, v6 []netip.Prefix
		for _, block := range ipBlocks(np) {
			for _, e := range block.Except {
				p := parsePrefix(t, e)
				if p.Addr().Is4() {
					v4 = append(v4, p)
				} else {
					v6 = append(v6, p)
				}
			}
		}
		require.NotEmpty(t, v4)
		for _, p := range v4 {
			a := netip.MustParseAddr("64:ff9b::").As16()
			b := p.Addr().As4()
			copy(a[12:], b[:])
			embedded := netip.PrefixFrom(netip.AddrFrom16(a), 96+p.Bits())
			assert.Contains(t, v6, embedded, "IPv4 except %s is reachable through NAT64 as %s", p, embedded)
		}
	})
}

// TestTaskNetworkPolicyAPIServerPatch follows the documented step for a
// cluster whose API server has a public address: an overlay adds the address
// to the IPv4 except list with a JSON patch, and only that address closes.
func TestTaskNetworkPolicyAPIServerPatch(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	base, err := filepath.Rel(dir, filepath.Join(root, "kustomize", "overlays", "all-in-one"))
	require.NoError(t, err)
	kustomization := `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ` + base + `
patches:
  - target:
      kind: NetworkPolicy
      name: ` + taskNetworkPolicyName + `
    patch: |-
      - op: add
        path: /spec/egress/1/to/0/ipBlock/except/-
        value: 203.0.113.10/32
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o600))
	policies := networkPolicies(renderResources(t, dir))
	require.Len(t, policies, 1)
	m, err := policies[0].Map()
	require.NoError(t, err)
	var np networkingv1.NetworkPolicy
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(m, &np))
	assert.False(t, egressAllowsIP(t, &np, netip.MustParseAddr("203.0.113.10")), "the API server's address")
	assert.True(t, egressAllowsIP(t, &np, netip.MustParseAddr("203.0.113.11")), "its neighbour")
	assert.True(t, egressAllowsIP(t, taskNetworkPolicy(t), netip.MustParseAddr("203.0.113.10")), "open without the patch")
}

// TestEgressAllowsIP keeps the helper honest: rules without peers and
// policies without Egress allow everything; selector peers are no addresses.
func TestEgressAllowsIP(t *testing.T) {
	addr := netip.MustParseAddr("10.0.0.1")
	block := networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: []string{"10.0.0.0/8"}}}
	selector := networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{}}
	policy := func(types []networkingv1.PolicyType, rules ...networkingv1.NetworkPolicyEgressRule) *networkingv1.NetworkPolicy {
		return &networkingv1.NetworkPolicy{Spec: networkingv1.NetworkPolicySpec{PolicyTypes: types, Egress: rules}}
	}
	egress := []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}
	ingress := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
	assert.False(t, egressAllowsIP(t, policy(egress), addr), "deny all")
	assert.False(t, egressAllowsIP(t, policy(egress, networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{block, selector}}), addr))
	assert.True(t, egressAllowsIP(t, policy(egress, networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{block}}), netip.MustParseAddr("8.8.8.8")))
	assert.True(t, egressAllowsIP(t, policy(egress, networkingv1.NetworkPolicyEgressRule{}), addr), "rule without peers")
	assert.True(t, egressAllowsIP(t, policy(ingress), addr), "policy not limiting egress")
}

// TestTaskNetworkPolicyApplies creates the policy with a server-side dry run
// on the real apiserver: accepted with no warning (non-canonical CIDRs warn)
// and stored with the spec it was sent with.
func TestTaskNetworkPolicyApplies(t *testing.T) {
	env := testenv.Require(t)
	np := taskNetworkPolicy(t)
	ctx := context.Background()
	warnings := &warningRecorder{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = warnings
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: taskNamespace}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	got, err := cs.NetworkingV1().NetworkPolicies(taskNamespace).Create(ctx, np, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	require.NoError(t, err)
	assert.Empty(t, warnings.list(), "apiserver warnings")
	want := np.Spec.DeepCopy()
	if len(want.Ingress) == 0 {
		want.Ingress = nil // `ingress: []` and no ingress mean the same
	}
	assert.Equal(t, *want, got.Spec)
}
