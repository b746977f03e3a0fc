package tasks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func fullTask() *v1alpha1.AgentTask {
	return &v1alpha1.AgentTask{
		ObjectMeta: metav1.ObjectMeta{Name: "summarise", Namespace: "agent-tasks", UID: "uid-1", Generation: 1},
		Spec: v1alpha1.AgentTaskSpec{
			TaskID: "t-1", UserID: "u-1", Image: "ghcr.io/acme/agent:1.2",
			Command: []string{"/agent"}, Args: []string{"--fast"},
			Input:              map[string]string{"PROMPT": "hi $(A) $$", "A": "1"},
			TimeoutSeconds:     ptr.To[int64](600),
			ServiceAccountName: "agent-sa",
			ImagePullSecrets:   []string{"regcred"},
			Resources: &v1alpha1.ResourceRequirements{
				Requests: &v1alpha1.ResourceAmounts{CPU: ptr.To(resource.MustParse("500m")), Memory: ptr.To(resource.MustParse("256Mi"))},
				Limits:   &v1alpha1.ResourceAmounts{Memory: ptr.To(resource.MustParse("1Gi"))},
			},
		},
	}
}

func TestBuildJobFullSpec(t *testing.T) {
	labels := map[string]string{
		"app.kubernetes.io/managed-by": "opsnorth-scheduler", "app.kubernetes.io/component": "agent",
		"app.kubernetes.io/part-of": "opsnorth-scheduler", "app.kubernetes.io/name": "agent-task",
		"app.kubernetes.io/instance": "summarise", "managed-by": "opsnorth-scheduler",
		"task_id": "t-1", "user_id": "u-1", "scheduler.opsnorth.io/agent-task": "summarise",
	}
	want := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "summarise", Namespace: "agent-tasks", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "scheduler.opsnorth.io/v1alpha1", Kind: "AgentTask", Name: "summarise", UID: "uid-1",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0), TTLSecondsAfterFinished: ptr.To[int32](3600), ActiveDeadlineSeconds: ptr.To[int64](600),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:      corev1.RestartPolicyNever,
					ServiceAccountName: "agent-sa",
					ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "regcred"}},
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name: "agent", Image: "ghcr.io/acme/agent:1.2", Command: []string{"/agent"}, Args: []string{"--fast"},
						// "$" doubled: the kubelet passes "hi $(A) $$" verbatim.
						Env: []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "PROMPT", Value: "hi $$(A) $$$$"}},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
						},
						TerminationMessagePath:   "/dev/termination-log",
						TerminationMessagePolicy: corev1.TerminationMessageReadFile,
						SecurityContext: &corev1.SecurityContext{
							RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false), Privileged: ptr.To(false),
							Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
						},
					}},
				},
			},
		},
	}
	assert.Equal(t, want, BuildJob(fullTask(), DefaultConfig(), nil))
}

func TestBuildJobVariants(t *testing.T) {
	minimal := &v1alpha1.AgentTask{
		ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns", UID: "u"},
		Spec:       v1alpha1.AgentTaskSpec{TaskID: "t", UserID: "u", Image: "img"},
	}
	tests := []struct {
		name  string
		task  *v1alpha1.AgentTask
		cfg   func(*Config)
		check func(t *testing.T, job *batchv1.Job)
	}{
		{"minimal task: no deadline, no token, no env", minimal, nil, func(t *testing.T, job *batchv1.Job) {
			assert.Nil(t, job.Spec.ActiveDeadlineSeconds)
			assert.Equal(t, ptr.To(false), job.Spec.Template.Spec.AutomountServiceAccountToken)
			assert.Nil(t, job.Spec.Template.Spec.Containers[0].Env)
			assert.Equal(t, corev1.ResourceRequirements{}, job.Spec.Template.Spec.Containers[0].Resources)
		}},
		{"task TTL overrides the default", func() *v1alpha1.AgentTask {
			t := minimal.DeepCopy()
			t.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
			return t
		}(), nil, func(t *testing.T, job *batchv1.Job) {
			assert.Equal(t, int32(0), *job.Spec.TTLSecondsAfterFinished)
		}},
		{"manager default TTL", minimal, func(c *Config) { c.DefaultTTLSecondsAfterFinished = 60 }, func(t *testing.T, job *batchv1.Job) {
			assert.Equal(t, int32(60), *job.Spec.TTLSecondsAfterFinished)
		}},
		{"privileged tasks allowed: no security context", minimal, func(c *Config) { c.AllowPrivileged = true }, func(t *testing.T, job *batchv1.Job) {
			assert.Nil(t, job.Spec.Template.Spec.SecurityContext)
			assert.Nil(t, job.Spec.Template.Spec.Containers[0].SecurityContext)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			job := BuildJob(tt.task, cfg, nil)
			require.Len(t, job.Spec.Template.Spec.Containers, 1)
			tt.check(t, job)
		})
	}
}

func TestBuildJobIsDeterministic(t *testing.T) {
	a, b := BuildJob(fullTask(), DefaultConfig(), nil), BuildJob(fullTask(), DefaultConfig(), nil)
	assert.Equal(t, a, b)
	a.Labels["x"] = "y"
	assert.NotContains(t, a.Spec.Template.Labels, "x", "Job and pod labels are separate maps")
}
