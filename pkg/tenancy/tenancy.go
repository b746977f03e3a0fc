// Package tenancy holds the rules that keep one user's objects out of
// another user's reach on a shared cluster.
package tenancy

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/pkg/labelkeys"
)

// ErrNotAllowed marks a reference to an object that its user may not use.
var ErrNotAllowed = errors.New("not allowed for this user")

// MayUse reports whether a user's task or workflow may use obj, a
// ServiceAccount or Secret in a namespace that several users share: obj is
// labelled for that user (labelkeys.User) or for sharing (labelkeys.Shared).
func MayUse(obj metav1.Object, userID string) bool {
	l := obj.GetLabels()
	return (userID != "" && l[labelkeys.User] == userID) || l[labelkeys.Shared] == labelkeys.SharedValue
}

// Ref is one object a spec field names.
type Ref struct {
	// Field is the path of the naming field, e.g. spec.imagePullSecrets[0].
	Field string
	// Kind and Name are the named object's.
	Kind, Name string
}

// CheckUse returns nil when userID may use obj, the object ref names in
// namespace, and otherwise an ErrNotAllowed that names the field and says
// how the object's owner can allow it.
func CheckUse(ref Ref, namespace string, obj metav1.Object, userID string) error {
	if MayUse(obj, userID) {
		return nil
	}
	return fmt.Errorf("%s: %w: %s %s/%s is labelled neither %s=%s nor %s=%s",
		ref.Field, ErrNotAllowed, ref.Kind, namespace, ref.Name,
		labelkeys.User, userID, labelkeys.Shared, labelkeys.SharedValue)
}
