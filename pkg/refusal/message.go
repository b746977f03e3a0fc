package refusal

import "strings"

// Reasons of refusals known only by their text.
const (
	// ReasonServiceAccountNotFound: the pod names a ServiceAccount that does
	// not exist (yet); creating it lets the controller's next try succeed.
	ReasonServiceAccountNotFound = "ServiceAccountNotFound"
	// ReasonFailedCreate: a controller could not create a pod for a reason
	// not recognised here.
	ReasonFailedCreate = "FailedCreate"
)

// OfMessage classifies a refusal known only by its text: the message of a
// FailedCreate event or ReplicaFailure condition, where a controller (the
// Job or ReplicaSet controller) reports what the API server answered it. It
// uses the same phrases as Of, and adds the ServiceAccount admission
// plugin's.
func OfMessage(msg string) Refusal {
	r := Refusal{Message: msg}
	switch {
	case deniedByAdmission(msg):
		r.Terminal, r.Reason = true, ReasonAdmissionDenied
	case strings.Contains(msg, "exceeded quota:"):
		r.Reason = ReasonQuotaExceeded
	case strings.Contains(msg, "failed quota:"):
		r.Terminal, r.Reason = true, ReasonAdmissionDenied
	case strings.Contains(msg, "because it is being terminated"):
		r.Reason = ReasonNamespaceTerminating
	case strings.Contains(msg, "error looking up service account"),
		strings.Contains(msg, "serviceaccount \"") && strings.Contains(msg, "\" not found"):
		r.Reason = ReasonServiceAccountNotFound
	default:
		r.Reason = ReasonFailedCreate
	}
	return r
}
