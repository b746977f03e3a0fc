package agents

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
	"opsnorth.io/scheduler/pkg/testkit"
)

func TestNamespaceTier(t *testing.T) {
	cfg := tiers.Defaults()
	tests := []struct {
		name, label, want, err string
	}{
		{name: "the label", label: "pro", want: "pro"},
		{name: "no label: --default-max-tier", want: "free"},
		{name: "an unknown label", label: "gold",
			err: `unknown tier "gold" (known: enterprise, free, pro) (label scheduler.opsnorth.io/max-tier of namespace team)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, tier, err := NamespaceTier(cfg, "team", tt.label, "free")
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, name)
			assert.Equal(t, cfg[tt.want], tier)
		})
	}
	_, _, err := NamespaceTier(cfg, "team", "", "gold")
	require.ErrorContains(t, err, "--default-max-tier, namespace team has no scheduler.opsnorth.io/max-tier label")
}

func TestCheckTier(t *testing.T) {
	free := tiers.Defaults()["free"]
	gpu := tiers.Defaults()["enterprise"]
	gpu.Max = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), GPUResource: resource.MustParse("1")}
	agent := func() *testkit.AgentWrapper { return testkit.MakeAgent("big", "team") }
	tests := []struct {
		name  string
		agent *ossav1.Agent
		tier  tiers.Tier
		err   string
	}{
		{name: "within the tier", agent: agent().Replicas(2).Resources("1", "1Gi", false).Autoscaling(1, 2, 50, 0).Obj(), tier: free},
		{name: "no replicas: one", agent: func() *ossav1.Agent { a := agent().Obj(); a.Spec.Replicas = nil; return a }(), tier: free},
		{name: "replicas", agent: agent().Replicas(20).Obj(), tier: free,
			err: `spec.replicas: 20 exceeds tier "free" maxReplicas 2`},
		{name: "autoscaling", agent: agent().Autoscaling(1, 3, 50, 0).Obj(), tier: free,
			err: `spec.autoscaling.maxReplicas: 3 exceeds tier "free" maxReplicas 2`},
		{name: "cpu", agent: agent().Resources("1500m", "", false).Obj(), tier: free,
			err: `spec.agent.runtime.resources.cpu: 1500m exceeds tier "free" max cpu 1`},
		{name: "memory", agent: agent().Resources("", "2Gi", false).Obj(), tier: free,
			err: `spec.agent.runtime.resources.memory: 2Gi exceeds tier "free" max memory 1Gi`},
		{name: "a GPU in a tier without", agent: agent().Resources("", "", true).Obj(), tier: free,
			err: `spec.agent.runtime.resources.gpu: tier "free" allows no GPU (max nvidia.com/gpu 0)`},
		{name: "a GPU in a tier with", agent: agent().Resources("16", "", true).Obj(), tier: gpu},
		{name: "gpu false", agent: func() *ossav1.Agent {
			a := agent().Resources("", "", false).Obj()
			a.Spec.Agent.Runtime.Resources.GPU = ptr.To(false)
			return a
		}(), tier: free},
		{name: "everything at once, each named", agent: agent().Replicas(20).Resources("50", "1Gi", true).Obj(), tier: free,
			err: `spec.replicas: 20 exceeds tier "free" maxReplicas 2; ` +
				`spec.agent.runtime.resources.cpu: 50 exceeds tier "free" max cpu 1; ` +
				`spec.agent.runtime.resources.gpu: tier "free" allows no GPU (max nvidia.com/gpu 0)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckTier(tt.agent, "free", tt.tier)
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tt.err)
		})
	}
}

func TestCPULimit(t *testing.T) {
	free := tiers.Defaults()["free"] // default cpu limit 250m
	q := func(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }
	tests := []struct {
		name string
		cpu  *resource.Quantity
		tier tiers.Tier
		want string
	}{
		{name: "no request", tier: free},
		{name: "below the default limit", cpu: q("100m"), tier: free},
		{name: "at the default limit", cpu: q("250m"), tier: free},
		{name: "above: the request", cpu: q("500m"), tier: free, want: "500m"},
		{name: "a tier without a default limit", cpu: q("500m")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := cpuLimit(tt.cpu, tt.tier)
			assert.Equal(t, tt.want != "", ok)
			if ok {
				assert.Equal(t, tt.want, got.String())
			}
		})
	}
}
