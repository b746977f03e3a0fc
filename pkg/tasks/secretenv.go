package tasks

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// secretEnv are the task's env entries read from Secret keys, in order.
func secretEnv(env []v1alpha1.SecretEnvVar) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, e := range env {
		ref := e.ValueFrom.SecretKeyRef
		out = append(out, corev1.EnvVar{Name: e.Name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}, Key: ref.Key, Optional: ptr.To(false)}}})
	}
	return out
}

// secretEnvFrom are the task's whole Secrets as environment, in order.
func secretEnvFrom(from []v1alpha1.SecretEnvFromSource) []corev1.EnvFromSource {
	var out []corev1.EnvFromSource
	for _, f := range from {
		out = append(out, corev1.EnvFromSource{Prefix: f.Prefix, SecretRef: &corev1.SecretEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: f.SecretRef.Name}, Optional: ptr.To(false)}})
	}
	return out
}
