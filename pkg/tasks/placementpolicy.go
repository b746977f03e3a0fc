package tasks

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// ReasonPlacementNotAllowed fails a task whose own placement reaches beyond
// what the platform's pod defaults allow: a toleration, RuntimeClass or
// node label not on their allow-lists, or a pod (anti-)affinity term that
// looks outside the task's namespace or spans more than one node.
const ReasonPlacementNotAllowed = "PlacementNotAllowed"

// hostnameTopology is the one topology key a task may always use: a term
// over one node cannot keep another tenant off a zone or the cluster.
const hostnameTopology = corev1.LabelHostname

// podViolation is the reason and message that fail task for a pod field
// the platform's pod defaults d (nil: none given) forbid; "" when none.
func podViolation(task *v1alpha1.AgentTask, d *PodDefaults) (string, string) {
	p := task.Spec.AgentPod
	for _, c := range []struct {
		reason string
		why    string
	}{
		{ReasonPodDefaultsEnforced, enforcedViolation(p, d)},
		{ReasonPriorityClassNotAllowed, priorityViolation(p, d)},
		{ReasonPlacementNotAllowed, placementViolation(p, task.Namespace, d)},
		{ReasonPodMetadataNotAllowed, metadataViolation(p.PodMetadata, d)},
	} {
		if c.why != "" {
			return c.reason, c.why
		}
	}
	return "", ""
}

// placementViolation names the first placement field of p, a task of
// namespace ns, that d does not allow, with why; "" when all are allowed.
// Only the task's own values are judged: what d sets is the platform's.
// d may be nil: then nothing beyond the safe minimum is allowed.
func placementViolation(p v1alpha1.AgentPod, ns string, d *PodDefaults) string {
	if d == nil {
		d = &PodDefaults{}
	}
	for i, t := range p.Tolerations {
		if !slices.ContainsFunc(d.Tolerations, func(o corev1.Toleration) bool { return o.MatchToleration(&t) }) &&
			!slices.ContainsFunc(d.AllowedTolerations, func(a corev1.Toleration) bool { return covers(a, t) }) {
			return fmt.Sprintf("spec.tolerations[%d]: %s is not allowed: a task may tolerate only %s (allowedTolerations of --pod-defaults)",
				i, describeToleration(t), orNone(describeTolerations(d.AllowedTolerations)))
		}
	}
	if r := p.RuntimeClassName; r != "" && r != d.RuntimeClassName && !slices.Contains(d.AllowedRuntimeClasses, r) {
		return fmt.Sprintf("spec.runtimeClassName: %q is not allowed: a task may choose only %s (allowedRuntimeClasses of --pod-defaults)",
			r, orNone(strings.Join(d.AllowedRuntimeClasses, ", ")))
	}
	nodeKey := func(field, key string) string {
		if slices.Contains(d.AllowedNodeLabels, key) {
			return ""
		}
		return fmt.Sprintf("%s: node label %q is not allowed: a task may select nodes only by %s (allowedNodeLabels of --pod-defaults)",
			field, key, orNone(strings.Join(d.AllowedNodeLabels, ", ")))
	}
	for _, k := range slices.Sorted(maps.Keys(p.NodeSelector)) {
		if v, ok := d.NodeSelector[k]; ok && v == p.NodeSelector[k] {
			continue
		}
		if why := nodeKey("spec.nodeSelector["+k+"]", k); why != "" {
			return why
		}
	}
	if p.Affinity == nil || (d.Affinity != nil && equality.Semantic.DeepEqual(p.Affinity, d.Affinity)) {
		return ""
	}
	for field, key := range nodeAffinityKeys(p.Affinity.NodeAffinity) {
		if why := nodeKey(field, key); why != "" {
			return why
		}
	}
	for field, term := range podAffinityTerms(p.Affinity) {
		if why := termViolation(term, ns, d); why != "" {
			return field + why
		}
	}
	return ""
}

// termViolation says why a pod (anti-)affinity term is not allowed, as the
// rest of a message that starts with the term's field.
func termViolation(term corev1.PodAffinityTerm, ns string, d *PodDefaults) string {
	if !d.AllowUnscopedPodAffinity {
		if term.NamespaceSelector != nil {
			return ".namespaceSelector: a task's pod affinity may look only at its own namespace (allowUnscopedPodAffinity of --pod-defaults)"
		}
		for j, n := range term.Namespaces {
			if n != ns {
				return fmt.Sprintf(".namespaces[%d]: %q is not allowed: a task's pod affinity may look only at its own namespace %q (allowUnscopedPodAffinity of --pod-defaults)", j, n, ns)
			}
		}
	}
	if term.TopologyKey != hostnameTopology && !slices.Contains(d.AllowedTopologyKeys, term.TopologyKey) {
		return fmt.Sprintf(".topologyKey: %q is not allowed: a task may use only %s (allowedTopologyKeys of --pod-defaults)",
			term.TopologyKey, strings.Join(append([]string{hostnameTopology}, d.AllowedTopologyKeys...), ", "))
	}
	return ""
}

// covers reports whether allowed tolerates every taint t tolerates.
func covers(allowed, t corev1.Toleration) bool {
	switch {
	case allowed.Key != t.Key:
		return false
	case allowed.Effect != "" && allowed.Effect != t.Effect:
		return false
	case allowed.Operator == corev1.TolerationOpExists:
		return true
	}
	return t.Operator != corev1.TolerationOpExists && t.Value == allowed.Value
}

// nodeAffinityKeys yields each node label key a node affinity selects on,
// with its field.
func nodeAffinityKeys(na *corev1.NodeAffinity) func(yield func(string, string) bool) {
	return func(yield func(string, string) bool) {
		if na == nil {
			return
		}
		term := func(field string, t corev1.NodeSelectorTerm) bool {
			for j, e := range t.MatchExpressions {
				if !yield(fmt.Sprintf("%s.matchExpressions[%d].key", field, j), e.Key) {
					return false
				}
			}
			for j, e := range t.MatchFields {
				if !yield(fmt.Sprintf("%s.matchFields[%d].key", field, j), e.Key) {
					return false
				}
			}
			return true
		}
		const base = "spec.affinity.nodeAffinity."
		if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			for i, t := range r.NodeSelectorTerms {
				if !term(fmt.Sprintf(base+"requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[%d]", i), t) {
					return
				}
			}
		}
		for i, p := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			if !term(fmt.Sprintf(base+"preferredDuringSchedulingIgnoredDuringExecution[%d].preference", i), p.Preference) {
				return
			}
		}
	}
}

// affinityKind is one side of a pod's affinity: its required and preferred terms.
type affinityKind struct {
	name      string
	required  []corev1.PodAffinityTerm
	preferred []corev1.WeightedPodAffinityTerm
}

func affinityKinds(a *corev1.Affinity) []affinityKind {
	var out []affinityKind
	if pa := a.PodAffinity; pa != nil {
		out = append(out, affinityKind{"podAffinity", pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution})
	}
	if pa := a.PodAntiAffinity; pa != nil {
		out = append(out, affinityKind{"podAntiAffinity", pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution})
	}
	return out
}

// podAffinityTerms yields every pod affinity and anti-affinity term of a,
// required and preferred, with its field.
func podAffinityTerms(a *corev1.Affinity) func(yield func(string, corev1.PodAffinityTerm) bool) {
	return func(yield func(string, corev1.PodAffinityTerm) bool) {
		for _, k := range affinityKinds(a) {
			for i, t := range k.required {
				if !yield(fmt.Sprintf("spec.affinity.%s.requiredDuringSchedulingIgnoredDuringExecution[%d]", k.name, i), t) {
					return
				}
			}
			for i, w := range k.preferred {
				if !yield(fmt.Sprintf("spec.affinity.%s.preferredDuringSchedulingIgnoredDuringExecution[%d].podAffinityTerm", k.name, i), w.PodAffinityTerm) {
					return
				}
			}
		}
	}
}

// scopedAffinity is a with every pod (anti-)affinity term narrowed to the
// pods of user: a term that keeps pods apart or together then steers only
// the user's own agents, never another tenant's in a shared namespace.
func scopedAffinity(a *corev1.Affinity, user string) *corev1.Affinity {
	if a == nil || (a.PodAffinity == nil && a.PodAntiAffinity == nil) {
		return a
	}
	out := a.DeepCopy()
	for _, k := range affinityKinds(out) {
		for i := range k.required {
			scopeTerm(&k.required[i], user)
		}
		for i := range k.preferred {
			scopeTerm(&k.preferred[i].PodAffinityTerm, user)
		}
	}
	return out
}

func scopeTerm(t *corev1.PodAffinityTerm, user string) {
	if t.LabelSelector == nil {
		return // selects no pod
	}
	if t.LabelSelector.MatchLabels == nil {
		t.LabelSelector.MatchLabels = map[string]string{}
	}
	t.LabelSelector.MatchLabels[labelkeys.UserID] = user
}

func describeToleration(t corev1.Toleration) string {
	op := t.Operator
	if op == "" {
		op = corev1.TolerationOpEqual
	}
	s := fmt.Sprintf("{key: %q, operator: %s", t.Key, op)
	if op == corev1.TolerationOpEqual {
		s += fmt.Sprintf(", value: %q", t.Value)
	}
	if t.Effect != "" {
		s += ", effect: " + string(t.Effect)
	}
	return s + "}"
}

func describeTolerations(ts []corev1.Toleration) string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, describeToleration(t))
	}
	return strings.Join(out, ", ")
}

func orNone(list string) string {
	if list == "" {
		return "what the platform's pod defaults set (their allow-list is empty)"
	}
	return list
}
