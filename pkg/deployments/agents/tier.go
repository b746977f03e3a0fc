package agents

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// Config is the Agent controller's share of the deployments manager's
// configuration.
type Config struct {
	// Tiers are the known resource tiers (--tier-config).
	Tiers tiers.Config
	// DefaultMaxTier is the tier of a namespace without a max-tier label
	// (--default-max-tier).
	DefaultMaxTier string
	// NetworkPolicies isolates the Agents' pods (not --disable-network-policies).
	NetworkPolicies bool
}

// NamespaceTier is the tier of the Agents in a namespace: its
// scheduler.opsnorth.io/max-tier label, else defaultTier. Every namespace
// has one, bound, backend or neither; an unknown name is an error naming
// where it came from.
func NamespaceTier(cfg tiers.Config, namespace, label, defaultTier string) (string, tiers.Tier, error) {
	name, source := label, "label "+labelkeys.MaxTier+" of namespace "+namespace
	if name == "" {
		name, source = defaultTier, "--default-max-tier, namespace "+namespace+" has no "+labelkeys.MaxTier+" label"
	}
	t, err := cfg.Get(name)
	if err != nil {
		return "", tiers.Tier{}, fmt.Errorf("%w (%s)", err, source)
	}
	return name, t, nil
}

// CheckTier refuses an Agent that asks for more than its namespace's tier
// allows: spec.replicas or autoscaling.maxReplicas above maxReplicas (the
// CRD keeps minReplicas at most maxReplicas), a cpu or memory request above
// the tier's max (the request is also the memory limit and, when above the
// default limit, the cpu limit), and a GPU unless the tier's max has
// nvidia.com/gpu of at least 1. The message names every field and its limit.
func CheckTier(a *ossav1.Agent, name string, t tiers.Tier) error {
	var refusals []string
	replicas := int32(1)
	if a.Spec.Replicas != nil {
		replicas = *a.Spec.Replicas
	}
	if replicas > t.MaxReplicas {
		refusals = append(refusals, fmt.Sprintf("spec.replicas: %d exceeds tier %q maxReplicas %d", replicas, name, t.MaxReplicas))
	}
	if as := a.Spec.Autoscaling; as != nil && as.MaxReplicas > t.MaxReplicas {
		refusals = append(refusals, fmt.Sprintf("spec.autoscaling.maxReplicas: %d exceeds tier %q maxReplicas %d",
			as.MaxReplicas, name, t.MaxReplicas))
	}
	const field = "spec.agent.runtime.resources."
	if r := a.Spec.Agent.Runtime.Resources; r != nil {
		for _, q := range []struct {
			field string
			res   corev1.ResourceName
			asked *resource.Quantity
		}{{"cpu", corev1.ResourceCPU, r.CPU}, {"memory", corev1.ResourceMemory, r.Memory}} {
			if ceiling, ok := t.Max[q.res]; ok && q.asked != nil && q.asked.Cmp(ceiling) > 0 {
				refusals = append(refusals, fmt.Sprintf("%s%s: %s exceeds tier %q max %s %s",
					field, q.field, q.asked, name, q.res, ceiling.String()))
			}
		}
		if gpus := t.Max[GPUResource]; r.GPU != nil && *r.GPU && gpus.Cmp(resource.MustParse("1")) < 0 {
			refusals = append(refusals, fmt.Sprintf("%sgpu: tier %q allows no GPU (max %s %s)", field, name, GPUResource, gpus.String()))
		}
	}
	if len(refusals) == 0 {
		return nil
	}
	return errors.New(strings.Join(refusals, "; "))
}

// cpuLimit is the cpu limit of a container requesting cpu in tier t: the
// request when the tier's default limit (which the LimitRange would give
// it) is below the request, so the pod stays valid; none otherwise.
func cpuLimit(cpu *resource.Quantity, t tiers.Tier) (resource.Quantity, bool) {
	def, ok := t.DefaultLimit[corev1.ResourceCPU]
	if cpu == nil || !ok || cpu.Cmp(def) <= 0 {
		return resource.Quantity{}, false
	}
	return *cpu, true
}
