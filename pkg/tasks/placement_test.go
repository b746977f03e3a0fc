package tasks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

var gpuNodes = corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

var agentNodes = corev1.Toleration{Key: "pool", Operator: corev1.TolerationOpEqual, Value: "agents", Effect: corev1.TaintEffectNoSchedule}

var zoneAffinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
	RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}}

func platformDefaults(enforce bool) *PodDefaults {
	return &PodDefaults{
		NodeSelector:     map[string]string{"pool": "agents"},
		Tolerations:      []corev1.Toleration{agentNodes},
		RuntimeClassName: "gvisor",
		PodMetadata:      v1alpha1.PodMetadata{Labels: map[string]string{"cost-center": "ai"}},
		Enforce:          enforce,
	}
}

func TestBuildJobPlacement(t *testing.T) {
	task := fullTask()
	task.Spec.AgentPod = v1alpha1.AgentPod{
		NodeSelector:      map[string]string{"gpu": "a100"},
		Tolerations:       []corev1.Toleration{gpuNodes},
		Affinity:          zoneAffinity,
		PriorityClassName: "agents-high",
		RuntimeClassName:  "kata",
		PodMetadata:       &v1alpha1.PodMetadata{Labels: map[string]string{"team": "research", "user_id": "spoofed"}, Annotations: map[string]string{"trace": "on"}},
	}
	task.Spec.Resources.Limits.Extended = map[string]resource.Quantity{"nvidia.com/gpu": resource.MustParse("2")}
	job := BuildJob(task, DefaultConfig(), nil)
	pod := job.Spec.Template
	assert.Equal(t, map[string]string{"gpu": "a100"}, pod.Spec.NodeSelector)
	assert.Equal(t, []corev1.Toleration{gpuNodes}, pod.Spec.Tolerations)
	assert.Equal(t, zoneAffinity, pod.Spec.Affinity)
	assert.Equal(t, "agents-high", pod.Spec.PriorityClassName)
	assert.Equal(t, ptr.To("kata"), pod.Spec.RuntimeClassName)
	assert.Equal(t, "research", pod.Labels["team"])
	assert.Equal(t, "u-1", pod.Labels["user_id"], "the manager's labels win")
	assert.Equal(t, job.Labels, withoutKey(pod.Labels, "team"), "the Job keeps only the manager's labels")
	assert.Equal(t, map[string]string{"trace": "on"}, pod.Annotations)
	assert.Equal(t, resource.MustParse("2"), pod.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"])
}

func withoutKey(m map[string]string, key string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func TestPodDefaults(t *testing.T) {
	tests := []struct {
		name    string
		own     v1alpha1.AgentPod
		enforce bool
		want    v1alpha1.AgentPod
		refused string
	}{{
		name: "a task without placement gets the defaults",
		want: v1alpha1.AgentPod{NodeSelector: map[string]string{"pool": "agents"}, Tolerations: []corev1.Toleration{agentNodes},
			RuntimeClassName: "gvisor", PodMetadata: &v1alpha1.PodMetadata{Labels: map[string]string{"cost-center": "ai"}}},
	}, {
		name: "a task's own values win where defaults are not enforced",
		own: v1alpha1.AgentPod{NodeSelector: map[string]string{"pool": "gpu", "zone": "a"}, Tolerations: []corev1.Toleration{gpuNodes},
			RuntimeClassName: "kata", PodMetadata: &v1alpha1.PodMetadata{Labels: map[string]string{"cost-center": "research"}}},
		want: v1alpha1.AgentPod{NodeSelector: map[string]string{"pool": "gpu", "zone": "a"}, Tolerations: []corev1.Toleration{agentNodes, gpuNodes},
			RuntimeClassName: "kata", PodMetadata: &v1alpha1.PodMetadata{Labels: map[string]string{"cost-center": "research"}}},
	}, {
		name: "enforced: equal values and other keys are fine", enforce: true,
		own: v1alpha1.AgentPod{NodeSelector: map[string]string{"pool": "agents", "zone": "a"}, RuntimeClassName: "gvisor", PriorityClassName: "high"},
		want: v1alpha1.AgentPod{NodeSelector: map[string]string{"pool": "agents", "zone": "a"}, Tolerations: []corev1.Toleration{agentNodes},
			RuntimeClassName: "gvisor", PriorityClassName: "high", PodMetadata: &v1alpha1.PodMetadata{Labels: map[string]string{"cost-center": "ai"}}},
	}, {
		name: "enforced: another runtime class", enforce: true,
		own:     v1alpha1.AgentPod{RuntimeClassName: "runc"},
		refused: `spec.runtimeClassName: "runc" is refused: the platform runs every agent with "gvisor"`,
	}, {
		name: "enforced: a node selector key the platform sets", enforce: true,
		own:     v1alpha1.AgentPod{NodeSelector: map[string]string{"pool": "gpu"}},
		refused: `spec.nodeSelector[pool]: "gpu" is refused: the platform sets "agents"`,
	}, {
		name: "enforced: a pod label the platform sets", enforce: true,
		own:     v1alpha1.AgentPod{PodMetadata: &v1alpha1.PodMetadata{Labels: map[string]string{"cost-center": "free"}}},
		refused: `spec.podMetadata.labels[cost-center]: "free" is refused: the platform sets "ai"`,
	}, {
		name: "enforced: tolerations of its own", enforce: true,
		own:     v1alpha1.AgentPod{Tolerations: []corev1.Toleration{gpuNodes}},
		refused: "spec.tolerations: refused: the platform decides the tolerations of every agent",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := platformDefaults(tt.enforce)
			assert.Equal(t, tt.refused, enforcedViolation(tt.own, d))
			if tt.refused == "" {
				assert.Equal(t, tt.want, withDefaults(tt.own, d))
			}
		})
	}
	assert.Empty(t, enforcedViolation(v1alpha1.AgentPod{RuntimeClassName: "runc"}, nil))
	assert.Equal(t, v1alpha1.AgentPod{RuntimeClassName: "runc"}, withDefaults(v1alpha1.AgentPod{RuntimeClassName: "runc"}, nil))
}

func TestLoadPodDefaults(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte(`
runtimeClassName: gvisor
nodeSelector: {pool: agents}
tolerations: [{key: pool, operator: Equal, value: agents, effect: NoSchedule}]
podMetadata: {labels: {cost-center: ai}}
enforce: true
`), 0o600))
	d, err := LoadPodDefaults(good)
	require.NoError(t, err)
	assert.Equal(t, platformDefaults(true), d)

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("runtimeClass: gvisor\n"), 0o600))
	_, err = LoadPodDefaults(bad)
	assert.ErrorContains(t, err, `unknown field "runtimeClass"`)
}

func TestBuildJobQueued(t *testing.T) {
	task := fullTask()
	task.Spec.QueueName = "agents"
	job := BuildJob(task, DefaultConfig(), nil)
	assert.Equal(t, ptr.To(true), job.Spec.Suspend, "created suspended: Kueue admits it")
	assert.Equal(t, "agents", job.Labels[KueueQueueLabel])
	assert.NotContains(t, job.Spec.Template.Labels, KueueQueueLabel, "the label is the Job's")
	plain := BuildJob(fullTask(), DefaultConfig(), nil)
	assert.Nil(t, plain.Spec.Suspend)
	assert.NotContains(t, plain.Labels, KueueQueueLabel)

	rec, err := recordJob(job.DeepCopy())
	require.NoError(t, err)
	assert.True(t, suspended(rec.(*jobRecord).job()), "the cache keeps whether the Job waits for admission")
}

func TestPriorityViolation(t *testing.T) {
	allow := &PodDefaults{PriorityClassName: "agents", AllowedPriorityClasses: []string{"agents-high"}}
	tests := []struct {
		name     string
		own      string
		defaults *PodDefaults
		want     string
	}{
		{name: "none chosen", own: "", defaults: nil},
		{name: "allowed", own: "agents-high", defaults: allow},
		{name: "the defaults' own", own: "agents", defaults: allow},
		{name: "another", own: "system-node-critical", defaults: allow,
			want: `spec.priorityClassName: "system-node-critical" is not allowed: a task may choose only agents-high (allowedPriorityClasses of --pod-defaults)`},
		{name: "no defaults", own: "agents-high", defaults: nil,
			want: `spec.priorityClassName: "agents-high" is not allowed: a task may choose only none: the platform's pod defaults allow no PriorityClass (allowedPriorityClasses of --pod-defaults)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, priorityViolation(v1alpha1.AgentPod{PriorityClassName: tt.own}, tt.defaults))
		})
	}
}

// TestShippedPodDefaults: kustomize and the chart ship the same enforced
// pod defaults, and the manager reads them.
func TestShippedPodDefaults(t *testing.T) {
	kustomized, err := LoadPodDefaults("../../kustomize/base/tasks/pod-defaults.yaml")
	require.NoError(t, err)
	assert.True(t, kustomized.Enforce)
	data, err := os.ReadFile("../../manifests/charts/opsnorth-scheduler/values.yaml")
	require.NoError(t, err)
	var values struct {
		Managers struct {
			Tasks struct {
				PodDefaults map[string]any `json:"podDefaults"`
			} `json:"tasks"`
		} `json:"managers"`
	}
	require.NoError(t, yaml.Unmarshal(data, &values))
	chart, err := yaml.Marshal(values.Managers.Tasks.PodDefaults)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "pod-defaults.yaml")
	require.NoError(t, os.WriteFile(file, chart, 0o600))
	charted, err := LoadPodDefaults(file)
	require.NoError(t, err)
	assert.Equal(t, kustomized, charted)
}
