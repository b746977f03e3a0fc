// Package render builds the child objects of a UserDeployment as pure
// functions of the resolved app, the manager's options and the cluster's
// capabilities. Built-in kinds are typed applyconfigurations
// (k8s.io/client-go/applyconfigurations); third-party kinds (Traefik
// IngressRoute, ExternalSecret, ServiceMonitor) are unstructured. Nothing here
// talks to the apiserver.
package render

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// Annotation keys the manager writes on children.
const (
	// AnnotationUserDeployment holds the full "<namespace>.<name>" of the owning
	// UserDeployment (the label may be a hash when that is too long).
	AnnotationUserDeployment = labelkeys.Prefix + "user-deployment"
	// AnnotationAppliedHash is the hash of the desired child last applied.
	AnnotationAppliedHash = labelkeys.Prefix + "applied-hash"
	// AnnotationCreatedNamespace marks a user namespace the manager created, so
	// it deletes only namespaces it owns.
	AnnotationCreatedNamespace = labelkeys.Prefix + "created-by"
	// AnnotationConfigHash on the pod template rolls pods when mounted config changes.
	AnnotationConfigHash = labelkeys.Prefix + "config-hash"
)

const maxNameLen = 63

// Hash returns the first n hex digits of the SHA-256 of s.
func Hash(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}

// Key is the "<namespace>.<name>" reference of a UserDeployment.
func Key(ud *v1alpha1.UserDeployment) string { return ud.Namespace + "." + ud.Name }

// KeyLabel is Key as a label value: itself when it fits 63 characters,
// otherwise a truncated prefix and a hash of the whole.
func KeyLabel(key string) string { return shorten(key) }

// ParseKey splits a "<namespace>.<name>" reference; namespaces hold no dots.
func ParseKey(key string) (namespace, name string, ok bool) {
	return strings.Cut(key, ".")
}

// Name joins parts with '-' into a DNS label of at most 63 characters,
// truncating and appending a hash of the full name when it is longer.
func Name(parts ...string) string { return shorten(strings.Join(parts, "-")) }

func shorten(s string) string {
	if len(s) <= maxNameLen {
		return s
	}
	h := Hash(s, 10)
	head := strings.TrimRight(s[:maxNameLen-len(h)-1], "-.")
	return head + "-" + h
}

// UserNamespace is the namespace of a user's children.
func UserNamespace(prefix, userID string) string { return Name(prefix, userID) }

// UserLabels label the user namespace and its quota and limit range.
func UserLabels(userID string) map[string]string {
	return map[string]string{
		labelkeys.ManagedBy: labelkeys.ManagedByValue,
		labelkeys.PartOf:    labelkeys.PartOfValue,
		labelkeys.User:      userID,
	}
}

// AppLabels label every child of ud and select its pods.
func AppLabels(ud *v1alpha1.UserDeployment) map[string]string {
	l := UserLabels(ud.Spec.UserID)
	l[labelkeys.UserDeployment] = KeyLabel(Key(ud))
	l[labelkeys.Instance] = ud.Name
	return l
}

// ServiceLabels label the children of one template service.
func ServiceLabels(ud *v1alpha1.UserDeployment, service string) map[string]string {
	l := AppLabels(ud)
	l[labelkeys.Service] = service
	l[labelkeys.Name] = service
	return l
}

// SelectorLabels select the pods of one service.
func SelectorLabels(ud *v1alpha1.UserDeployment, service string) map[string]string {
	return map[string]string{
		labelkeys.UserDeployment: KeyLabel(Key(ud)),
		labelkeys.Service:        service,
	}
}

// OwnerAnnotations carry the full owner reference of a child.
func OwnerAnnotations(ud *v1alpha1.UserDeployment) map[string]string {
	return map[string]string{AnnotationUserDeployment: Key(ud)}
}
