package testkit

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The objects a tenant or an operator makes in a user namespace beside the
// manager's: they must outlive the user's last app.

// MakeRestrictedPod returns a bare pod the restricted Pod Security level
// admits, as user namespaces enforce it.
func MakeRestrictedPod(name, namespace string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "main", Image: "ghcr.io/opsnorth/db:1", SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}}}}
}

// MakeClaim returns a 100Mi ReadWriteOnce claim without annotations, owned
// by owners.
func MakeClaim(name, namespace string, owners ...metav1.OwnerReference) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, OwnerReferences: owners},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100Mi")}}}}
}

// OwnedBy is the owner reference of a pod, for what an operator hangs on it.
func OwnedBy(pod *corev1.Pod) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}
}
