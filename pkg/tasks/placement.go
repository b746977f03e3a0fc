package tasks

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// ReasonPodDefaultsEnforced fails a task that sets a placement field the
// platform's enforced pod defaults decide.
const ReasonPodDefaultsEnforced = "PodDefaultsEnforced"

// ReasonPriorityClassNotAllowed fails a task whose own priorityClassName is
// not one the platform lets tasks choose (PodDefaults.AllowedPriorityClasses).
const ReasonPriorityClassNotAllowed = "PriorityClassNotAllowed"

// priorityViolation says why a task's own priorityClassName is refused; ""
// when it sets none, or one d allows (d may be nil: none is allowed).
func priorityViolation(p v1alpha1.AgentPod, d *PodDefaults) string {
	if p.PriorityClassName == "" || (d != nil && (slices.Contains(d.AllowedPriorityClasses, p.PriorityClassName) ||
		p.PriorityClassName == d.PriorityClassName)) {
		return ""
	}
	allowed := "none: the platform's pod defaults allow no PriorityClass"
	if d != nil && len(d.AllowedPriorityClasses) > 0 {
		allowed = strings.Join(d.AllowedPriorityClasses, ", ")
	}
	return fmt.Sprintf("spec.priorityClassName: %q is not allowed: a task may choose only %s (allowedPriorityClasses of --pod-defaults)",
		p.PriorityClassName, allowed)
}

// withDefaults returns the task's pod fields with d filled in where the
// task leaves them unset; d may be nil.
func withDefaults(p v1alpha1.AgentPod, d *PodDefaults) v1alpha1.AgentPod {
	if d == nil {
		return p
	}
	p.NodeSelector = merged(d.NodeSelector, p.NodeSelector)
	p.Tolerations = append(slices.Clone(d.Tolerations), p.Tolerations...)
	if p.Affinity == nil {
		p.Affinity = d.Affinity.DeepCopy()
	}
	if p.PriorityClassName == "" {
		p.PriorityClassName = d.PriorityClassName
	}
	if p.RuntimeClassName == "" {
		p.RuntimeClassName = d.RuntimeClassName
	}
	var own v1alpha1.PodMetadata
	if p.PodMetadata != nil {
		own = *p.PodMetadata
	}
	if m := (v1alpha1.PodMetadata{Labels: merged(d.PodMetadata.Labels, own.Labels),
		Annotations: merged(d.PodMetadata.Annotations, own.Annotations)}); m.Labels != nil || m.Annotations != nil {
		p.PodMetadata = &m
	}
	return p
}

// merged is base with over's keys on top; nil when both are empty.
func merged(base, over map[string]string) map[string]string {
	if len(base)+len(over) == 0 {
		return nil
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, over)
	return out
}

// enforcedViolation names the first field of p that enforced defaults d
// forbid, with why; "" when p keeps to them or nothing is enforced.
func enforcedViolation(p v1alpha1.AgentPod, d *PodDefaults) string {
	if d == nil || !d.Enforce {
		return ""
	}
	scalar := func(field, own, def string) string {
		if def != "" && own != "" && own != def {
			return fmt.Sprintf("spec.%s: %q is refused: the platform runs every agent with %q", field, own, def)
		}
		return ""
	}
	keys := func(field string, own, def map[string]string) string {
		for _, k := range slices.Sorted(maps.Keys(def)) {
			if v, ok := own[k]; ok && v != def[k] {
				return fmt.Sprintf("spec.%s[%s]: %q is refused: the platform sets %q", field, k, v, def[k])
			}
		}
		return ""
	}
	var own v1alpha1.PodMetadata
	if p.PodMetadata != nil {
		own = *p.PodMetadata
	}
	for _, v := range []string{
		scalar("runtimeClassName", p.RuntimeClassName, d.RuntimeClassName),
		scalar("priorityClassName", p.PriorityClassName, d.PriorityClassName),
		keys("nodeSelector", p.NodeSelector, d.NodeSelector),
		keys("podMetadata.labels", own.Labels, d.PodMetadata.Labels),
		keys("podMetadata.annotations", own.Annotations, d.PodMetadata.Annotations),
	} {
		if v != "" {
			return v
		}
	}
	if len(d.Tolerations) > 0 && len(p.Tolerations) > 0 {
		return "spec.tolerations: refused: the platform decides the tolerations of every agent"
	}
	if d.Affinity != nil && p.Affinity != nil && !equality.Semantic.DeepEqual(d.Affinity, p.Affinity) {
		return "spec.affinity: refused: the platform decides the affinity of every agent"
	}
	return ""
}

// place sets the pod's placement from p (defaults already applied).
func place(spec *corev1.PodSpec, p v1alpha1.AgentPod) {
	spec.NodeSelector = maps.Clone(p.NodeSelector)
	spec.Tolerations = slices.Clone(p.Tolerations)
	spec.Affinity = p.Affinity.DeepCopy()
	spec.PriorityClassName = p.PriorityClassName
	if p.RuntimeClassName != "" {
		spec.RuntimeClassName = &p.RuntimeClassName
	}
}

// podMetadata is the pod template's metadata: the task's labels and
// annotations under the manager's own labels, which always win.
func podMetadata(m *v1alpha1.PodMetadata, lbls map[string]string) metav1.ObjectMeta {
	out := metav1.ObjectMeta{Labels: maps.Clone(lbls)}
	if m == nil {
		return out
	}
	out.Labels = merged(m.Labels, lbls)
	out.Annotations = maps.Clone(m.Annotations)
	return out
}
