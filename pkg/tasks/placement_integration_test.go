package tasks_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tasks"
)

// TestPlacement: a task's placement reaches its pod template, the
// platform's --pod-defaults fill in the rest, and a task that overrides
// enforced defaults or reaches beyond their allow-lists fails, naming the
// field, with no Job.
func TestPlacement(t *testing.T) {
	k := newCluster(t, "tasks-placement")
	defaults := filepath.Join(t.TempDir(), "pod-defaults.yaml")
	require.NoError(t, os.WriteFile(defaults, []byte(`
runtimeClassName: gvisor
nodeSelector: {pool: agents}
podMetadata: {annotations: {platform.example.com/audit: "on"}}
allowedPriorityClasses: [agents-high]
allowedTolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
allowedNodeLabels: [gpu]
allowedLabelPrefixes: [team.example.com/]
enforce: true
`), 0o600))
	startManager(t, k.ns, append(testArgs(false), "--pod-defaults="+defaults)...)

	t.Run("own placement and the defaults", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		gpu := corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
		k.createTask("placed", func(at *v1alpha1.AgentTask) {
			at.Spec.NodeSelector = map[string]string{"gpu": "a100"}
			at.Spec.Tolerations = []corev1.Toleration{gpu}
			at.Spec.PriorityClassName = "agents-high"
			at.Spec.PodMetadata = &v1alpha1.PodMetadata{Labels: map[string]string{"team.example.com/name": "research"},
				Annotations: map[string]string{"user.opsnorth.io/note": "draft"}}
			at.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team.example.com/name": "research"}},
					TopologyKey:   corev1.LabelHostname}}}}
			at.Spec.Resources = &v1alpha1.ResourceRequirements{
				Limits: &v1alpha1.ResourceAmounts{Extended: map[string]resource.Quantity{"nvidia.com/gpu": resource.MustParse("1")}}}
		})
		pod := k.job("placed").Spec.Template
		assert.Equal(t, map[string]string{"gpu": "a100", "pool": "agents"}, pod.Spec.NodeSelector)
		assert.Equal(t, []corev1.Toleration{gpu}, pod.Spec.Tolerations)
		assert.Equal(t, "agents-high", pod.Spec.PriorityClassName)
		assert.Equal(t, ptr.To("gvisor"), pod.Spec.RuntimeClassName)
		assert.Equal(t, "research", pod.Labels["team.example.com/name"])
		assert.Equal(t, map[string]string{"team.example.com/name": "research", "user_id": "user-1"},
			pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels,
			"the term is narrowed to the user's own pods")
		assert.Equal(t, map[string]string{"platform.example.com/audit": "on", "user.opsnorth.io/note": "draft"}, pod.Annotations)
		limit := pod.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"]
		assert.Equal(t, "1", limit.String())
	})
	t.Run("a priority class the platform does not allow", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("critical", func(at *v1alpha1.AgentTask) { at.Spec.PriorityClassName = "system-cluster-critical" })
		task := k.waitPhase("critical", v1alpha1.TaskFailed)
		assert.Equal(t, tasks.ReasonPriorityClassNotAllowed, task.Status.Reason)
		assert.Equal(t, `spec.priorityClassName: "system-cluster-critical" is not allowed: a task may choose only agents-high `+
			`(allowedPriorityClasses of --pod-defaults)`, task.Status.Message)
		assert.Empty(t, k.jobsOf("critical"), "no Job")
	})
	for _, tc := range []struct {
		name, task, reason, message string
		pod                         func(*v1alpha1.AgentTask)
	}{
		{"anti-affinity over every namespace", "blocker", tasks.ReasonPlacementNotAllowed,
			"spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector: a task's pod affinity may look only at its own namespace (allowUnscopedPodAffinity of --pod-defaults)",
			func(at *v1alpha1.AgentTask) {
				at.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"user_id": "bob"}}, NamespaceSelector: &metav1.LabelSelector{}, TopologyKey: "kubernetes.io/os"}}}}
			}},
		{"every taint tolerated", "everywhere", tasks.ReasonPlacementNotAllowed,
			`spec.tolerations[0]: {key: "", operator: Exists} is not allowed: a task may tolerate only {key: "nvidia.com/gpu", operator: Exists, effect: NoSchedule} (allowedTolerations of --pod-defaults)`,
			func(at *v1alpha1.AgentTask) {
				at.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
			}},
		{"a control-plane node", "control-plane", tasks.ReasonPlacementNotAllowed,
			`spec.nodeSelector[node-role.kubernetes.io/control-plane]: node label "node-role.kubernetes.io/control-plane" is not allowed: a task may select nodes only by gpu (allowedNodeLabels of --pod-defaults)`,
			func(at *v1alpha1.AgentTask) {
				at.Spec.NodeSelector = map[string]string{"node-role.kubernetes.io/control-plane": ""}
			}},
		{"a mesh opt-out", "no-mesh", tasks.ReasonPodMetadataNotAllowed,
			"spec.podMetadata.annotations[sidecar.istio.io/inject]: the key is not allowed: a task's pod annotations must start with user.opsnorth.io/ (allowedAnnotationPrefixes of --pod-defaults)",
			func(at *v1alpha1.AgentTask) {
				at.Spec.PodMetadata = &v1alpha1.PodMetadata{Annotations: map[string]string{"sidecar.istio.io/inject": "false"}}
			}},
		{"a NetworkPolicy's selector key", "dns-lookalike", tasks.ReasonPodMetadataNotAllowed,
			"spec.podMetadata.labels[k8s-app]: refused: the platform's NetworkPolicies select pods by this key",
			func(at *v1alpha1.AgentTask) {
				at.Spec.PodMetadata = &v1alpha1.PodMetadata{Labels: map[string]string{"k8s-app": "kube-dns"}}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := k.with(t)
			k.createTask(tc.task, tc.pod)
			task := k.waitPhase(tc.task, v1alpha1.TaskFailed)
			assert.Equal(t, tc.reason, task.Status.Reason)
			assert.Equal(t, tc.message, task.Status.Message)
			assert.Empty(t, k.jobsOf(tc.task), "no Job")
		})
	}
	t.Run("an enforced default overridden", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("runc", func(at *v1alpha1.AgentTask) { at.Spec.RuntimeClassName = "runc" })
		task := k.waitPhase("runc", v1alpha1.TaskFailed)
		assert.Equal(t, tasks.ReasonPodDefaultsEnforced, task.Status.Reason)
		assert.Equal(t, `spec.runtimeClassName: "runc" is refused: the platform runs every agent with "gvisor"`, task.Status.Message)
		assert.Empty(t, k.jobsOf("runc"), "no Job for a refused task")
	})
}
