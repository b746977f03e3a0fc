//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tasks"
)

// blockEveryone is the anti-affinity that kept another tenant's new pods
// off every node: their label, every namespace, a cluster-wide topology.
func blockEveryone() *corev1.Affinity {
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"user_id": "victim"}},
		NamespaceSelector: &metav1.LabelSelector{},
		TopologyKey:       "kubernetes.io/os",
	}}}}
}

// TestPodPolicyAttacks: what a tenant's task may ask of its pod, with the
// managers as packaged (enforced pod defaults). Each attack of the issue
// fails its task, or its workflow's step, naming the field, with no Job;
// an input that changes the agent's runtime is refused at admission; a pod
// that slips past (created directly) meets the namespace's quota; and the
// honest task, with affinity over its own node, still succeeds.
func TestPodPolicyAttacks(t *testing.T) {
	c := requireCluster(t)
	cs := scheduler(t, c)
	stamp := time.Now().Unix() % 100000
	name := func(s string) string { return fmt.Sprintf("e2e-%d-%s", stamp, s) }
	for _, tc := range []struct {
		name, reason, message string
		mod                   func(*v1alpha1.AgentTask)
	}{
		{"block-all", tasks.ReasonPlacementNotAllowed,
			"spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector: a task's pod affinity may look only at its own namespace",
			func(at *v1alpha1.AgentTask) { at.Spec.Affinity = blockEveryone() }},
		{"tolerate-all", tasks.ReasonPlacementNotAllowed, `spec.tolerations[0]: {key: "", operator: Exists} is not allowed`,
			func(at *v1alpha1.AgentTask) {
				at.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
			}},
		{"control-plane", tasks.ReasonPlacementNotAllowed, `spec.nodeSelector[node-role.kubernetes.io/control-plane]: node label "node-role.kubernetes.io/control-plane" is not allowed`,
			func(at *v1alpha1.AgentTask) {
				at.Spec.NodeSelector = map[string]string{"node-role.kubernetes.io/control-plane": ""}
			}},
		{"no-sandbox", tasks.ReasonPlacementNotAllowed, `spec.runtimeClassName: "runc" is not allowed`,
			func(at *v1alpha1.AgentTask) { at.Spec.RuntimeClassName = "runc" }},
		{"multus", tasks.ReasonPodMetadataNotAllowed, "spec.podMetadata.annotations[k8s.v1.cni.cncf.io/networks]: the key is not allowed",
			func(at *v1alpha1.AgentTask) {
				at.Spec.PodMetadata = &v1alpha1.PodMetadata{Annotations: map[string]string{"k8s.v1.cni.cncf.io/networks": "host-net"}}
			}},
		{"dns-lookalike", tasks.ReasonPodMetadataNotAllowed, "spec.podMetadata.labels[k8s-app]: refused: the platform's NetworkPolicies select pods by this key",
			func(at *v1alpha1.AgentTask) {
				at.Spec.PodMetadata = &v1alpha1.PodMetadata{Labels: map[string]string{"k8s-app": "kube-dns"}}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(t.Context(), agentTask(name(tc.name), nil, tc.mod), metav1.CreateOptions{})
			require.NoError(t, err)
			got := waitTask(t, name(tc.name), func(at *v1alpha1.AgentTask) bool { return at.Status.Phase.IsTerminal() })
			assert.Equal(t, v1alpha1.TaskFailed, got.Status.Phase)
			assert.Equal(t, tc.reason, got.Status.Reason)
			assert.Contains(t, got.Status.Message, tc.message)
			_, err = c.Clientset.BatchV1().Jobs(taskNamespace).Get(t.Context(), name(tc.name), metav1.GetOptions{})
			assert.True(t, apierrors.IsNotFound(err), "no Job: %v", err)
		})
	}

	t.Run("a GPU-visibility input", func(t *testing.T) {
		_, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(t.Context(),
			agentTask(name("gpus"), map[string]string{"NVIDIA_VISIBLE_DEVICES": "all"}), metav1.CreateOptions{})
		require.Error(t, err)
		assert.True(t, apierrors.IsInvalid(err), "%v", err)
		assert.Contains(t, err.Error(), "input key NVIDIA_VISIBLE_DEVICES is refused")
	})

	t.Run("a workflow step tolerating every taint", func(t *testing.T) {
		wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: taskNamespace, Name: name("wf")},
			Spec: v1alpha1.WorkflowSpec{UserID: "e2e", Steps: []v1alpha1.WorkflowStep{{Name: "anywhere", Image: "agent:e2e",
				AgentPod: v1alpha1.AgentPod{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}}}}
		_, err := cs.SchedulerV1alpha1().Workflows(taskNamespace).Create(t.Context(), wf, metav1.CreateOptions{})
		require.NoError(t, err)
		var got *v1alpha1.Workflow
		require.Eventually(t, func() bool {
			got, err = cs.SchedulerV1alpha1().Workflows(taskNamespace).Get(t.Context(), wf.Name, metav1.GetOptions{})
			return err == nil && got.Status.Phase.IsTerminal()
		}, timeout, tick)
		assert.Equal(t, v1alpha1.WorkflowFailed, got.Status.Phase)
		require.Len(t, got.Status.StepStatuses, 1)
		assert.Equal(t, tasks.ReasonPlacementNotAllowed, got.Status.StepStatuses[0].Reason)
		assert.Contains(t, got.Status.StepStatuses[0].Message, "spec.tolerations[0]")
	})

	t.Run("a pod created past the manager meets the quota", func(t *testing.T) {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: taskNamespace, Name: name("direct")},
			Spec: corev1.PodSpec{Affinity: blockEveryone(), // restricted, so only the quota refuses it
				SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
				Containers: []corev1.Container{{Name: "c", Image: "agent:e2e", SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}}}}
		_, err := c.Clientset.CoreV1().Pods(taskNamespace).Create(t.Context(), pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		require.Error(t, err)
		assert.True(t, apierrors.IsForbidden(err), "%v", err)
		assert.Contains(t, err.Error(), "opsnorth-scheduler-cross-namespace-affinity")
	})

	t.Run("control: affinity over its own node", func(t *testing.T) {
		_, err := cs.SchedulerV1alpha1().AgentTasks(taskNamespace).Create(t.Context(), agentTask(name("honest"), nil, func(at *v1alpha1.AgentTask) {
			at.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"user.opsnorth.io/role": "crawler"}}, TopologyKey: corev1.LabelHostname}}}}
			at.Spec.PodMetadata = &v1alpha1.PodMetadata{Labels: map[string]string{"user.opsnorth.io/role": "crawler"}}
		}), metav1.CreateOptions{})
		require.NoError(t, err)
		got := waitTask(t, name("honest"), func(at *v1alpha1.AgentTask) bool { return at.Status.Phase.IsTerminal() })
		assert.Equal(t, v1alpha1.TaskSucceeded, got.Status.Phase, got.Status.Message)
	})
}
