package webhook

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// ConditionDelivered is True once the completion webhook was delivered.
const ConditionDelivered = "WebhookDelivered"

// Condition is the WebhookDelivered condition of a terminal object whose
// delivery is d: Delivered, GaveUp, Retrying or Pending.
func Condition(d *v1alpha1.WebhookDelivery, generation int64) metav1.Condition {
	c := metav1.Condition{Type: ConditionDelivered, Status: metav1.ConditionFalse, ObservedGeneration: generation}
	switch {
	case d != nil && d.Delivered:
		c.Status, c.Reason = metav1.ConditionTrue, "Delivered"
		c.Message = fmt.Sprintf("delivered after %d attempt(s), receiver answered %d", d.Attempts, d.LastStatusCode)
	case d != nil && d.GaveUp:
		c.Reason = "GaveUp"
		c.Message = fmt.Sprintf("gave up after %d attempt(s): %s", d.Attempts, d.LastError)
	case d != nil && d.Attempts > 0:
		c.Reason = "Retrying"
		c.Message = fmt.Sprintf("attempt %d failed: %s", d.Attempts, d.LastError)
	default:
		c.Reason, c.Message = "Pending", "the completion webhook has not been sent yet"
	}
	return c
}
