package tasks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func podTerm(topology string, namespaces []string, nsSelector *metav1.LabelSelector) corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{
		LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"user_id": "victim"}},
		Namespaces:        namespaces,
		NamespaceSelector: nsSelector,
		TopologyKey:       topology,
	}
}

func antiAffinity(t corev1.PodAffinityTerm) *corev1.Affinity {
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{t}}}
}

func nodeAffinity(key string) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
		Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpExists}}}}}}}
}

// TestPlacementViolation: without allow-lists a task may place its pod only
// on what the defaults set and pod terms over its own namespace and node;
// the platform's allow-lists widen it; each refusal names the field.
func TestPlacementViolation(t *testing.T) {
	everything := corev1.Toleration{Operator: corev1.TolerationOpExists}
	controlPlane := corev1.Toleration{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	gpuAny := corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}
	allowing := &PodDefaults{
		Tolerations:              []corev1.Toleration{agentNodes},
		NodeSelector:             map[string]string{"pool": "agents"},
		RuntimeClassName:         "gvisor",
		AllowedTolerations:       []corev1.Toleration{gpuNodes, {Key: "team", Operator: corev1.TolerationOpEqual, Value: "ai"}},
		AllowedRuntimeClasses:    []string{"kata"},
		AllowedNodeLabels:        []string{"kubernetes.io/arch", "topology.kubernetes.io/zone"},
		AllowedTopologyKeys:      []string{"topology.kubernetes.io/zone"},
		AllowUnscopedPodAffinity: false,
	}
	for _, tc := range []struct {
		name string
		pod  v1alpha1.AgentPod
		d    *PodDefaults
		want string
	}{
		{name: "nothing asked, no defaults", pod: v1alpha1.AgentPod{}},
		{name: "a term over its own node and namespace", pod: v1alpha1.AgentPod{Affinity: antiAffinity(podTerm(corev1.LabelHostname, []string{"agent-tasks"}, nil))}},
		{name: "a toleration of every taint", pod: v1alpha1.AgentPod{Tolerations: []corev1.Toleration{everything}},
			want: `spec.tolerations[0]: {key: "", operator: Exists} is not allowed: a task may tolerate only what the platform's pod defaults set (their allow-list is empty) (allowedTolerations of --pod-defaults)`},
		{name: "every taint, though some are allowed", pod: v1alpha1.AgentPod{Tolerations: []corev1.Toleration{gpuNodes, everything}}, d: allowing,
			want: `spec.tolerations[1]: {key: "", operator: Exists} is not allowed: a task may tolerate only {key: "nvidia.com/gpu", operator: Exists, effect: NoSchedule}, {key: "team", operator: Equal, value: "ai"} (allowedTolerations of --pod-defaults)`},
		{name: "the control plane", pod: v1alpha1.AgentPod{Tolerations: []corev1.Toleration{controlPlane}}, d: allowing,
			want: `spec.tolerations[0]: {key: "node-role.kubernetes.io/control-plane", operator: Exists, effect: NoSchedule} is not allowed`},
		{name: "an allowed key with every effect where one is allowed", pod: v1alpha1.AgentPod{Tolerations: []corev1.Toleration{gpuAny}}, d: allowing,
			want: `spec.tolerations[0]: {key: "nvidia.com/gpu", operator: Exists} is not allowed`},
		{name: "allowed: narrower than an entry, the defaults' own", d: allowing, pod: v1alpha1.AgentPod{Tolerations: []corev1.Toleration{
			{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpEqual, Value: "a100", Effect: corev1.TaintEffectNoSchedule},
			{Key: "team", Value: "ai", Effect: corev1.TaintEffectNoExecute}, agentNodes}}},
		{name: "another value of an Equal entry", d: allowing, pod: v1alpha1.AgentPod{Tolerations: []corev1.Toleration{{Key: "team", Operator: corev1.TolerationOpExists}}},
			want: `spec.tolerations[0]: {key: "team", operator: Exists} is not allowed`},
		{name: "a RuntimeClass without a list", pod: v1alpha1.AgentPod{RuntimeClassName: "runc"},
			want: `spec.runtimeClassName: "runc" is not allowed: a task may choose only what the platform's pod defaults set (their allow-list is empty) (allowedRuntimeClasses of --pod-defaults)`},
		{name: "a RuntimeClass not on the list", pod: v1alpha1.AgentPod{RuntimeClassName: "runc"}, d: allowing,
			want: `spec.runtimeClassName: "runc" is not allowed: a task may choose only kata (allowedRuntimeClasses of --pod-defaults)`},
		{name: "allowed RuntimeClasses", pod: v1alpha1.AgentPod{RuntimeClassName: "kata"}, d: allowing},
		{name: "the defaults' RuntimeClass", pod: v1alpha1.AgentPod{RuntimeClassName: "gvisor"}, d: allowing},
		{name: "a control-plane nodeSelector", pod: v1alpha1.AgentPod{NodeSelector: map[string]string{"kubernetes.io/arch": "amd64", "node-role.kubernetes.io/control-plane": ""}}, d: allowing,
			want: `spec.nodeSelector[node-role.kubernetes.io/control-plane]: node label "node-role.kubernetes.io/control-plane" is not allowed: a task may select nodes only by kubernetes.io/arch, topology.kubernetes.io/zone (allowedNodeLabels of --pod-defaults)`},
		{name: "the defaults' own pair and allowed keys", pod: v1alpha1.AgentPod{NodeSelector: map[string]string{"pool": "agents", "kubernetes.io/arch": "arm64"}}, d: allowing},
		{name: "another value of the defaults' key", pod: v1alpha1.AgentPod{NodeSelector: map[string]string{"pool": "dedicated"}}, d: allowing,
			want: `spec.nodeSelector[pool]: node label "pool" is not allowed`},
		{name: "node affinity on a dedicated pool", pod: v1alpha1.AgentPod{Affinity: nodeAffinity("dedicated")}, d: allowing,
			want: `spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key: node label "dedicated" is not allowed`},
		{name: "node affinity on an allowed key", pod: v1alpha1.AgentPod{Affinity: nodeAffinity("topology.kubernetes.io/zone")}, d: allowing},
		{name: "anti-affinity over every namespace", pod: v1alpha1.AgentPod{Affinity: antiAffinity(podTerm(corev1.LabelHostname, nil, &metav1.LabelSelector{}))},
			want: `spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector: a task's pod affinity may look only at its own namespace (allowUnscopedPodAffinity of --pod-defaults)`},
		{name: "affinity naming another namespace", pod: v1alpha1.AgentPod{Affinity: &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: podTerm(corev1.LabelHostname, []string{"agent-tasks", "kube-system"}, nil)}}}}},
			want: `spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.namespaces[1]: "kube-system" is not allowed: a task's pod affinity may look only at its own namespace "agent-tasks" (allowUnscopedPodAffinity of --pod-defaults)`},
		{name: "anti-affinity over a zone", pod: v1alpha1.AgentPod{Affinity: antiAffinity(podTerm("topology.kubernetes.io/zone", nil, nil))},
			want: `spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: "topology.kubernetes.io/zone" is not allowed: a task may use only kubernetes.io/hostname (allowedTopologyKeys of --pod-defaults)`},
		{name: "a zone where the platform allows it", pod: v1alpha1.AgentPod{Affinity: antiAffinity(podTerm("topology.kubernetes.io/zone", nil, nil))}, d: allowing},
		{name: "every namespace where the platform allows it", pod: v1alpha1.AgentPod{Affinity: antiAffinity(podTerm(corev1.LabelHostname, nil, &metav1.LabelSelector{}))},
			d: &PodDefaults{AllowUnscopedPodAffinity: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := placementViolation(tc.pod, "agent-tasks", tc.d)
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, tc.want)
		})
	}
}

// TestScopedAffinity: every pod term of a task is narrowed to its user's
// pods; a nil selector (no pod) and node affinity stay as they are.
func TestScopedAffinity(t *testing.T) {
	a := &corev1.Affinity{
		NodeAffinity: nodeAffinity("zone").NodeAffinity,
		PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
			{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{}, TopologyKey: corev1.LabelHostname}}}},
		PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
			podTerm(corev1.LabelHostname, nil, nil), {TopologyKey: corev1.LabelHostname}}},
	}
	before := a.DeepCopy()
	got := scopedAffinity(a, "alice")
	assert.Equal(t, before, a, "the task's own spec is not changed")
	assert.Equal(t, map[string]string{"user_id": "alice"}, got.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels,
		"a term on another user's pods selects only the task's user's")
	assert.Equal(t, map[string]string{"user_id": "alice"}, got.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector.MatchLabels)
	assert.Nil(t, got.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[1].LabelSelector)
	assert.Equal(t, before.NodeAffinity, got.NodeAffinity)
	assert.Nil(t, scopedAffinity(nil, "alice"))
}
