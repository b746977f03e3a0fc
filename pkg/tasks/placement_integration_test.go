package tasks_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tasks"
)

// TestPlacement: a task's placement reaches its pod template, the
// platform's --pod-defaults fill in the rest, and enforced defaults refuse
// a task that overrides them, naming the field.
func TestPlacement(t *testing.T) {
	k := newCluster(t, "tasks-placement")
	defaults := filepath.Join(t.TempDir(), "pod-defaults.yaml")
	require.NoError(t, os.WriteFile(defaults, []byte(`
runtimeClassName: gvisor
nodeSelector: {pool: agents}
podMetadata: {annotations: {platform.example.com/audit: "on"}}
allowedPriorityClasses: [agents-high]
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
			at.Spec.PodMetadata = &v1alpha1.PodMetadata{Labels: map[string]string{"team": "research"}}
			at.Spec.Resources = &v1alpha1.ResourceRequirements{
				Limits: &v1alpha1.ResourceAmounts{Extended: map[string]resource.Quantity{"nvidia.com/gpu": resource.MustParse("1")}}}
		})
		pod := k.job("placed").Spec.Template
		assert.Equal(t, map[string]string{"gpu": "a100", "pool": "agents"}, pod.Spec.NodeSelector)
		assert.Equal(t, []corev1.Toleration{gpu}, pod.Spec.Tolerations)
		assert.Equal(t, "agents-high", pod.Spec.PriorityClassName)
		assert.Equal(t, ptr.To("gvisor"), pod.Spec.RuntimeClassName)
		assert.Equal(t, "research", pod.Labels["team"])
		assert.Equal(t, map[string]string{"platform.example.com/audit": "on"}, pod.Annotations)
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
