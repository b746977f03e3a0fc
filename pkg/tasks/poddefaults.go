package tasks

import (
	"bytes"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// PodDefaults are the platform's placement for every agent pod of the task
// namespace (--pod-defaults): a task's own values are used where it sets
// them and these fill in the rest. With Enforce, a task may not decide what
// the defaults set: scalars must be unset or equal, map keys the defaults
// set must be absent or equal (other keys may be added), and tolerations
// and affinity may not be set at all where the defaults set them.
type PodDefaults struct {
	NodeSelector      map[string]string    `json:"nodeSelector,omitempty"`
	Tolerations       []corev1.Toleration  `json:"tolerations,omitempty"`
	Affinity          *corev1.Affinity     `json:"affinity,omitempty"`
	PriorityClassName string               `json:"priorityClassName,omitempty"`
	RuntimeClassName  string               `json:"runtimeClassName,omitempty"`
	PodMetadata       v1alpha1.PodMetadata `json:"podMetadata,omitzero"`
	// AllowedPriorityClasses are the PriorityClasses a task may choose
	// itself: a higher priority preempts other users' agents, so a task
	// naming any other fails (reason PriorityClassNotAllowed). Without it
	// (or without --pod-defaults) a task may name only the defaults' own
	// priorityClassName, which it gets anyway.
	AllowedPriorityClasses []string `json:"allowedPriorityClasses,omitempty"`
	// AllowedTolerations are what a task's own tolerations may tolerate:
	// each must tolerate no taint beyond one entry (same key; the entry's
	// effect, if set; its value unless it is operator Exists). Without
	// them a task may repeat only the defaults' tolerations; an empty key
	// with operator Exists (every taint) only where an entry has it too.
	AllowedTolerations []corev1.Toleration `json:"allowedTolerations,omitempty"`
	// AllowedRuntimeClasses are the RuntimeClasses a task may choose besides
	// the defaults' runtimeClassName.
	AllowedRuntimeClasses []string `json:"allowedRuntimeClasses,omitempty"`
	// AllowedNodeLabels are the node label keys (and node fields, such as
	// metadata.name) a task's nodeSelector and node affinity may select on.
	// The defaults' own nodeSelector pairs may always be repeated.
	AllowedNodeLabels []string `json:"allowedNodeLabels,omitempty"`
	// AllowedTopologyKeys are the topology keys a task's pod (anti-)affinity
	// may use besides kubernetes.io/hostname: a wider one lets one pod keep
	// others off a whole zone.
	AllowedTopologyKeys []string `json:"allowedTopologyKeys,omitempty"`
	// AllowUnscopedPodAffinity lets a task's pod (anti-)affinity terms look
	// at other namespaces and at other users' pods. Without it a term may
	// name only the task's own namespace, and the manager narrows every
	// term to the pods of the task's user (label user_id).
	AllowUnscopedPodAffinity bool `json:"allowUnscopedPodAffinity,omitempty"`
	// AllowedLabelPrefixes and AllowedAnnotationPrefixes are the key
	// prefixes a task's podMetadata may use besides user.opsnorth.io/
	// (string prefixes: "team.example.com/" allows that prefix, "" every
	// key). Label keys the platform's NetworkPolicies select on are refused
	// whatever the prefixes allow.
	AllowedLabelPrefixes      []string `json:"allowedLabelPrefixes,omitempty"`
	AllowedAnnotationPrefixes []string `json:"allowedAnnotationPrefixes,omitempty"`
	// Enforce forbids tasks to override what the defaults set.
	Enforce bool `json:"enforce,omitempty"`
}

// LoadPodDefaults reads a PodDefaults YAML file; unknown fields are errors.
func LoadPodDefaults(path string) (*PodDefaults, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d := &PodDefaults{}
	if err := yaml.UnmarshalStrict(bytes.TrimSpace(data), d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}
