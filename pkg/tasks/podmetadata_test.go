package tasks

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// TestMetadataViolation: a task's pod labels and annotations use only
// user.opsnorth.io/ and the prefixes the platform adds, and never a label
// key the platform's NetworkPolicies select on.
func TestMetadataViolation(t *testing.T) {
	widened := &PodDefaults{
		PodMetadata:               v1alpha1.PodMetadata{Labels: map[string]string{"cost-center": "ai"}},
		AllowedLabelPrefixes:      []string{"team.example.com/", ""},
		AllowedAnnotationPrefixes: []string{"trace.example.com/"},
	}
	for _, tc := range []struct {
		name        string
		labels, ann map[string]string
		d           *PodDefaults
		want        string
	}{
		{name: "none"},
		{name: "the user prefix", labels: map[string]string{"user.opsnorth.io/team": "a"}, ann: map[string]string{"user.opsnorth.io/note": "x"}},
		{name: "a mesh opt-out", ann: map[string]string{"sidecar.istio.io/inject": "false"},
			want: "spec.podMetadata.annotations[sidecar.istio.io/inject]: the key is not allowed: a task's pod annotations must start with user.opsnorth.io/ (allowedAnnotationPrefixes of --pod-defaults)"},
		{name: "Multus networks", ann: map[string]string{"k8s.v1.cni.cncf.io/networks": "host"},
			want: "spec.podMetadata.annotations[k8s.v1.cni.cncf.io/networks]: the key is not allowed"},
		{name: "a Calico address", ann: map[string]string{"cni.projectcalico.org/ipAddrs": `["10.0.0.5"]`}, d: widened,
			want: "a task's pod annotations must start with user.opsnorth.io/ or trace.example.com/ (allowedAnnotationPrefixes of --pod-defaults)"},
		{name: "an unprefixed label", labels: map[string]string{"app": "db"},
			want: "spec.podMetadata.labels[app]: the key is not allowed: a task's pod labels must start with user.opsnorth.io/ (allowedLabelPrefixes of --pod-defaults)"},
		{name: "the DNS pods' selector key, though every prefix is allowed", labels: map[string]string{"k8s-app": "kube-dns"}, d: widened,
			want: "spec.podMetadata.labels[k8s-app]: refused: the platform's NetworkPolicies select pods by this key"},
		{name: "widened prefixes and the defaults' own pair", labels: map[string]string{"team.example.com/x": "1", "app": "y", "cost-center": "ai"},
			ann: map[string]string{"trace.example.com/on": "1"}, d: widened},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m *v1alpha1.PodMetadata
			if tc.labels != nil || tc.ann != nil {
				m = &v1alpha1.PodMetadata{Labels: tc.labels, Annotations: tc.ann}
			}
			got := metadataViolation(m, tc.d)
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, tc.want)
		})
	}
}

// TestNetworkPolicySelectorKeys: every pod label key a packaged
// NetworkPolicy selects on is one a task's pod may never carry.
func TestNetworkPolicySelectorKeys(t *testing.T) {
	files, err := filepath.Glob("../../kustomize/components/*/*.yaml")
	require.NoError(t, err)
	var found []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		np := &networkingv1.NetworkPolicy{}
		if yaml.Unmarshal(data, np) != nil || np.Kind != "NetworkPolicy" {
			continue
		}
		found = append(found, selectorKeys(&np.Spec.PodSelector)...)
		for _, rules := range [][]networkingv1.NetworkPolicyPeer{peers(np.Spec.Ingress), egressPeers(np.Spec.Egress)} {
			for _, p := range rules {
				found = append(found, selectorKeys(p.PodSelector)...)
			}
		}
	}
	require.NotEmpty(t, found, "the packaged agent pods' policy selects kube-dns pods")
	for _, k := range found {
		assert.True(t, slices.Contains(NetworkPolicySelectorKeys, k), "a task's pod could carry %q", k)
	}
}

func selectorKeys(s *metav1.LabelSelector) []string {
	if s == nil {
		return nil
	}
	var out []string
	for k := range s.MatchLabels {
		out = append(out, k)
	}
	for _, e := range s.MatchExpressions {
		out = append(out, e.Key)
	}
	return out
}

func peers(rules []networkingv1.NetworkPolicyIngressRule) (out []networkingv1.NetworkPolicyPeer) {
	for _, r := range rules {
		out = append(out, r.From...)
	}
	return out
}

func egressPeers(rules []networkingv1.NetworkPolicyEgressRule) (out []networkingv1.NetworkPolicyPeer) {
	for _, r := range rules {
		out = append(out, r.To...)
	}
	return out
}
