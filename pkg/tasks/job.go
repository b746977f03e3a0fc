package tasks

import (
	"maps"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// KueueQueueLabel names the Kueue LocalQueue of a task's Job.
const KueueQueueLabel = "kueue.x-k8s.io/queue-name"

// ContainerName is the name of the agent's container in the task's pod.
const ContainerName = "agent"

// componentValue is the app.kubernetes.io/component of task Jobs and pods; with
// managed-by it selects exactly the objects this manager caches.
const componentValue = "agent"

// JobName returns the name of task's Job: the task's own name, which the API
// validates as a DNS label. A fixed name makes the API server refuse a second
// Job for the same task, whatever a stale cache or a second leader believes.
func JobName(task *v1alpha1.AgentTask) string { return task.Name }

// selectorLabels are the labels every task Job and pod carries and the
// manager's cache selects on.
func selectorLabels() map[string]string {
	return map[string]string{
		labelkeys.ManagedBy: labelkeys.ManagedByValue,
		labelkeys.Component: componentValue,
	}
}

// jobLabels are the labels of task's Job and of its pod.
func jobLabels(task *v1alpha1.AgentTask) map[string]string {
	out := selectorLabels()
	maps.Copy(out, map[string]string{
		labelkeys.PartOf:          labelkeys.PartOfValue,
		labelkeys.Name:            "agent-task",
		labelkeys.Instance:        task.Name,
		labelkeys.LegacyManagedBy: labelkeys.ManagedByValue,
		labelkeys.TaskID:          task.Spec.TaskID,
		labelkeys.UserID:          task.Spec.UserID,
		labelkeys.AgentTask:       task.Name,
	})
	return out
}

// BuildJob returns the Job that runs task, its envFrom expanded with the
// Secrets' keys as checked (keys). It is created once and never updated:
// the task's spec is immutable.
func BuildJob(task *v1alpha1.AgentTask, cfg Config, keys SecretKeys) *batchv1.Job {
	lbls := jobLabels(task)
	own := task.Spec.AgentPod
	if cfg.PodDefaults == nil || !cfg.PodDefaults.AllowUnscopedPodAffinity {
		own.Affinity = scopedAffinity(own.Affinity, task.Spec.UserID)
	}
	pod := withDefaults(own, cfg.PodDefaults)
	jobLbls := lbls
	var suspend *bool
	if q := task.Spec.QueueName; q != "" {
		// Kueue's own webhook would suspend it; the Job must not run a
		// moment before admission even where that webhook is not installed.
		jobLbls, suspend = maps.Clone(lbls), ptr.To(true)
		jobLbls[KueueQueueLabel] = q
	}
	ttl := cfg.DefaultTTLSecondsAfterFinished
	if task.Spec.TTLSecondsAfterFinished != nil {
		ttl = *task.Spec.TTLSecondsAfterFinished
	}
	return &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      JobName(task),
			Namespace: task.Namespace,
			Labels:    jobLbls,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         v1alpha1.SchemeGroupVersion.String(),
				Kind:               "AgentTask",
				Name:               task.Name,
				UID:                task.UID,
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit:            ptr.To[int32](0),
			Suspend:                 suspend,
			TTLSecondsAfterFinished: ptr.To(ttl),
			ActiveDeadlineSeconds:   task.Spec.TimeoutSeconds,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: podMetadata(pod.PodMetadata, lbls),
				Spec:       podSpec(task, pod, cfg, keys),
			},
		},
	}
}

// podSpec is the agent's pod: pod is the task's placement with the
// platform's defaults filled in.
func podSpec(task *v1alpha1.AgentTask, pod v1alpha1.AgentPod, cfg Config, keys SecretKeys) corev1.PodSpec {
	spec := corev1.PodSpec{
		RestartPolicy:      corev1.RestartPolicyNever,
		ServiceAccountName: task.Spec.ServiceAccountName,
		Containers: []corev1.Container{{
			Name:                     ContainerName,
			Image:                    task.Spec.Image,
			Command:                  slices.Clone(task.Spec.Command),
			Args:                     slices.Clone(task.Spec.Args),
			Env:                      slices.Concat(inputEnv(task.Spec.Input), secretEnv(task.Spec.Env), secretEnvFrom(task.Spec.EnvFrom, keys)),
			Resources:                resources(task.Spec.Resources),
			TerminationMessagePath:   corev1.TerminationMessagePathDefault,
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		}},
	}
	// Without a ServiceAccount of its own the agent has no use for the
	// namespace default's token; mounting it would only widen its reach.
	if task.Spec.ServiceAccountName == "" {
		spec.AutomountServiceAccountToken = ptr.To(false)
	}
	place(&spec, pod)
	for _, name := range task.Spec.ImagePullSecrets {
		spec.ImagePullSecrets = append(spec.ImagePullSecrets, corev1.LocalObjectReference{Name: name})
	}
	if !cfg.AllowPrivileged {
		spec.SecurityContext = &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}
		spec.Containers[0].SecurityContext = &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
			Privileged:               ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}
	}
	return spec
}

// inputEnv turns the task's input into environment variables, sorted by name
// so the same task always renders the same Job. The kubelet expands "$(NAME)"
// in env values and reduces "$$" to "$", so every "$" is doubled: the agent
// sees each value verbatim, and an output one step returns cannot read
// another variable into the next step's input.
func inputEnv(input map[string]string) []corev1.EnvVar {
	if len(input) == 0 {
		return nil
	}
	env := make([]corev1.EnvVar, 0, len(input))
	for _, name := range slices.Sorted(maps.Keys(input)) {
		env = append(env, corev1.EnvVar{Name: name, Value: strings.ReplaceAll(input[name], "$", "$$")})
	}
	return env
}

func resources(r *v1alpha1.ResourceRequirements) corev1.ResourceRequirements {
	if r == nil {
		return corev1.ResourceRequirements{}
	}
	return corev1.ResourceRequirements{Requests: amounts(r.Requests), Limits: amounts(r.Limits)}
}

func amounts(a *v1alpha1.ResourceAmounts) corev1.ResourceList {
	if a == nil {
		return nil
	}
	out := corev1.ResourceList{}
	for name, q := range map[corev1.ResourceName]*resource.Quantity{
		corev1.ResourceCPU:              a.CPU,
		corev1.ResourceMemory:           a.Memory,
		corev1.ResourceEphemeralStorage: a.EphemeralStorage,
	} {
		if q != nil {
			out[name] = q.DeepCopy()
		}
	}
	for name, q := range a.Extended {
		out[corev1.ResourceName(name)] = q.DeepCopy()
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
