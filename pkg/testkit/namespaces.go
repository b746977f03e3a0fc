package testkit

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/pkg/labelkeys"
)

// MakeBackendNamespace returns a namespace marked as a backend namespace
// that acts for any user, the only kind besides a user-bound one where the
// managers serve objects with a userId. An empty name sets GenerateName
// "<prefix>-" instead; prefix is ignored otherwise.
func MakeBackendNamespace(name, prefix string) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   name,
		Labels: map[string]string{labelkeys.Backend: labelkeys.BackendValue},
	}}
	if name == "" {
		ns.GenerateName = prefix + "-"
	}
	return ns
}

// MakeBoundNamespace returns a namespace bound to one user (label
// scheduler.opsnorth.io/tenant).
func MakeBoundNamespace(name, userID string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   name,
		Labels: map[string]string{labelkeys.Tenant: userID},
	}}
}
