// Package refusal decides what an API server's refusal means for the object
// whose reconcile met it: whether any retry can succeed, and the reason the
// object's status names. The three managers use it wherever they create or
// apply what a user's object asked for.
//
// A terminal refusal ends the object (an AgentTask fails, a Workflow's step
// and so the workflow fail, a UserDeployment stalls until its spec changes)
// with the API server's message; a transient one is retried with backoff
// while the status names the reason.
//
//	API answer                                        outcome    reason
//	422 Invalid (schema, CEL)                         terminal   Invalid
//	400 BadRequest                                    terminal   BadRequest
//	413 RequestEntityTooLarge                         terminal   TooLarge
//	405 MethodNotSupported                            terminal   MethodNotSupported
//	403 or 422 denied by admission (a webhook, a
//	    ValidatingAdmissionPolicy, Pod Security)      terminal   AdmissionDenied
//	403 failed quota (a required limit is not set)    terminal   AdmissionDenied
//	403 exceeded quota                                transient  QuotaExceeded
//	403 the namespace is terminating                  transient  NamespaceTerminating
//	403 any other Forbidden (RBAC: an install fault
//	    an administrator can fix)                     transient  Forbidden
//	404 NotFound                                      transient  NotFound
//	409 Conflict, AlreadyExists                       transient  Conflict
//	429 TooManyRequests                               transient  Throttled
//	500, 503, 504 and timeouts                        transient  APIUnavailable
//	no such kind (its CRD is not installed)           transient  KindNotInstalled
//	anything else (network, context)                  transient  (none)
//
// Callers that must tell AlreadyExists apart (a deterministic name another
// owner holds) check it before they classify.
package refusal

import (
	"errors"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reasons of refusals.
const (
	ReasonInvalid              = "Invalid"
	ReasonBadRequest           = "BadRequest"
	ReasonTooLarge             = "TooLarge"
	ReasonMethodNotSupported   = "MethodNotSupported"
	ReasonAdmissionDenied      = "AdmissionDenied"
	ReasonQuotaExceeded        = "QuotaExceeded"
	ReasonNamespaceTerminating = "NamespaceTerminating"
	ReasonForbidden            = "Forbidden"
	ReasonNotFound             = "NotFound"
	ReasonConflict             = "Conflict"
	ReasonThrottled            = "Throttled"
	ReasonAPIUnavailable       = "APIUnavailable"
	ReasonKindNotInstalled     = "KindNotInstalled"
)

// Refusal is what an error means for the object being reconciled.
type Refusal struct {
	// Terminal is set when no retry can succeed.
	Terminal bool
	// Reason names the refusal in a condition; empty for errors that are
	// not the API server's answer.
	Reason string
	// Message is the API server's message (the error's text otherwise).
	Message string
}

// Of classifies err (nil is not a refusal: the zero Refusal).
func Of(err error) Refusal {
	if err == nil {
		return Refusal{}
	}
	if meta.IsNoMatchError(err) {
		return Refusal{Reason: ReasonKindNotInstalled, Message: err.Error()}
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return Refusal{Message: err.Error()}
	}
	st := status.Status()
	r := Refusal{Message: st.Message}
	switch {
	case deniedByAdmission(st.Message):
		// A policy's denial comes as Forbidden or, with its reason, Invalid.
		r.Terminal, r.Reason = true, ReasonAdmissionDenied
	case st.Reason == metav1.StatusReasonInvalid:
		r.Terminal, r.Reason = true, ReasonInvalid
	case st.Reason == metav1.StatusReasonBadRequest:
		r.Terminal, r.Reason = true, ReasonBadRequest
	case st.Reason == metav1.StatusReasonRequestEntityTooLarge:
		r.Terminal, r.Reason = true, ReasonTooLarge
	case st.Reason == metav1.StatusReasonMethodNotAllowed:
		r.Terminal, r.Reason = true, ReasonMethodNotSupported
	case st.Reason == metav1.StatusReasonForbidden || st.Code == http.StatusForbidden:
		r.Terminal, r.Reason = forbidden(st)
	case st.Reason == metav1.StatusReasonNotFound:
		r.Reason = ReasonNotFound
	case st.Reason == metav1.StatusReasonConflict || st.Reason == metav1.StatusReasonAlreadyExists:
		r.Reason = ReasonConflict
	case st.Reason == metav1.StatusReasonTooManyRequests:
		r.Reason = ReasonThrottled
	case apierrors.IsInternalError(err), apierrors.IsServiceUnavailable(err), apierrors.IsServerTimeout(err),
		apierrors.IsTimeout(err), st.Code >= http.StatusInternalServerError:
		r.Reason = ReasonAPIUnavailable
	}
	return r
}

// forbidden tells an admission denial (terminal) from quota, a terminating
// namespace and RBAC (transient). The API server says which only in the
// message and causes; these are its fixed phrases.
func forbidden(st metav1.Status) (bool, string) {
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			if c.Type == corev1.NamespaceTerminatingCause {
				return false, ReasonNamespaceTerminating
			}
		}
	}
	switch msg := st.Message; {
	case strings.Contains(msg, "exceeded quota:"):
		return false, ReasonQuotaExceeded
	case strings.Contains(msg, "because it is being terminated"):
		return false, ReasonNamespaceTerminating
	case strings.Contains(msg, "failed quota:"):
		return true, ReasonAdmissionDenied
	}
	return false, ReasonForbidden
}

// deniedByAdmission matches the API server's phrases for a denial by an
// admission webhook, a ValidatingAdmissionPolicy or Pod Security.
func deniedByAdmission(msg string) bool {
	return strings.Contains(msg, "admission webhook") && strings.Contains(msg, "denied the request") ||
		strings.Contains(msg, "ValidatingAdmissionPolicy") && strings.Contains(msg, "denied request") ||
		strings.Contains(msg, "violates PodSecurity")
}
