package tasks

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// ReasonPodMetadataNotAllowed fails a task whose podMetadata sets a label
// or annotation key outside the prefixes the platform allows, or a label
// key the platform's NetworkPolicies select pods by.
const ReasonPodMetadataNotAllowed = "PodMetadataNotAllowed"

// UserMetadataPrefix is the key prefix every task may use in podMetadata.
// CNI, service mesh and policy tools read their own prefixes (Multus,
// Calico, Istio): a tenant's pod may not speak to them unless the platform
// allows the prefix.
const UserMetadataPrefix = "user.opsnorth.io/"

// NetworkPolicySelectorKeys are the pod label keys the NetworkPolicies the
// suite ships select on (the agent pods' policy, UserDeployments' and
// Agents' policies). A task's pod may never carry them: it would gain the
// traffic those policies allow. TestNetworkPolicySelectorKeys keeps the
// list equal to what the packaged policies select.
var NetworkPolicySelectorKeys = []string{"k8s-app", labelkeys.UserDeployment, labelkeys.Agent}

// metadataViolation names the first podMetadata key of m that d does not
// allow, with why; "" when all are allowed. Pairs the defaults set
// themselves may be repeated. d may be nil.
func metadataViolation(m *v1alpha1.PodMetadata, d *PodDefaults) string {
	if m == nil {
		return ""
	}
	if d == nil {
		d = &PodDefaults{}
	}
	check := func(field string, own, def map[string]string, prefixes []string, labels bool) string {
		allowed := append([]string{UserMetadataPrefix}, prefixes...)
		for _, k := range slices.Sorted(maps.Keys(own)) {
			if v, ok := def[k]; ok && v == own[k] {
				continue
			}
			if labels && slices.Contains(NetworkPolicySelectorKeys, k) {
				return fmt.Sprintf("spec.podMetadata.%s[%s]: refused: the platform's NetworkPolicies select pods by this key", field, k)
			}
			if !slices.ContainsFunc(allowed, func(p string) bool { return strings.HasPrefix(k, p) }) {
				return fmt.Sprintf("spec.podMetadata.%s[%s]: the key is not allowed: a task's pod %s must start with %s (allowed%sPrefixes of --pod-defaults)",
					field, k, field, strings.Join(allowed, " or "), strings.ToUpper(field[:1])+strings.TrimSuffix(field[1:], "s"))
			}
		}
		return ""
	}
	if why := check("labels", m.Labels, d.PodMetadata.Labels, d.AllowedLabelPrefixes, true); why != "" {
		return why
	}
	return check("annotations", m.Annotations, d.PodMetadata.Annotations, d.AllowedAnnotationPrefixes, false)
}
