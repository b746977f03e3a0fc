package manager

import (
	"context"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Types of ErrorType, the type label of opsnorth_reconcile_phase_errors_total:
// a fixed set, whatever the errors say.
const (
	// ErrorRefused is a controller's refusal of what its object asks
	// (PhaseErrors.Refused).
	ErrorRefused = "refused"
	// ErrorTerminal is a reconcile.TerminalError: no retry can fix it.
	ErrorTerminal         = "terminal"
	ErrorConflict         = "conflict"
	ErrorAlreadyExists    = "already_exists"
	ErrorNotFound         = "not_found"
	ErrorForbidden        = "forbidden"
	ErrorInvalid          = "invalid"
	ErrorTimeout          = "timeout"
	ErrorTooManyRequests  = "too_many_requests"
	ErrorUnavailable      = "unavailable"
	ErrorKindNotInstalled = "kind_not_installed"
	ErrorCanceled         = "canceled"
	ErrorOther            = "other"
)

// ErrorType classifies err, however wrapped: a refusal as refused reports it
// (nil for none), then a terminal error, a context's end, a kind whose CRD
// is not installed, then the API server's answer by its reason or code;
// anything else (network, the controller's own) is other.
func ErrorType(err error, refused func(error) bool) string {
	switch {
	case refused != nil && refused(err):
		return ErrorRefused
	case errors.Is(err, reconcile.TerminalError(nil)):
		return ErrorTerminal
	case errors.Is(err, context.Canceled):
		return ErrorCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return ErrorTimeout
	case meta.IsNoMatchError(err):
		return ErrorKindNotInstalled
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return ErrorOther
	}
	st := status.Status()
	switch st.Reason {
	case metav1.StatusReasonConflict:
		return ErrorConflict
	case metav1.StatusReasonAlreadyExists:
		return ErrorAlreadyExists
	case metav1.StatusReasonNotFound:
		return ErrorNotFound
	case metav1.StatusReasonForbidden, metav1.StatusReasonUnauthorized:
		return ErrorForbidden
	case metav1.StatusReasonInvalid, metav1.StatusReasonBadRequest, metav1.StatusReasonRequestEntityTooLarge:
		return ErrorInvalid
	case metav1.StatusReasonTimeout, metav1.StatusReasonServerTimeout:
		return ErrorTimeout
	case metav1.StatusReasonTooManyRequests:
		return ErrorTooManyRequests
	}
	switch code := st.Code; {
	case code == http.StatusTooManyRequests:
		return ErrorTooManyRequests
	case code == http.StatusGatewayTimeout:
		return ErrorTimeout
	case code >= http.StatusInternalServerError:
		return ErrorUnavailable
	}
	return ErrorOther
}
