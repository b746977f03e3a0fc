package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/webhook"
)

// WebhookEvent is the X-Opsnorth-Event of a workflow completion webhook.
const WebhookEvent = "workflow.completed"

// webhooks sends completion webhooks with the shared delivery code.
type webhooks struct {
	sender *webhook.Sender
	policy webhook.Policy
}

// Payload is the body of the completion webhook.
type Payload struct {
	Kind           string        `json:"kind"`
	Namespace      string        `json:"namespace"`
	Name           string        `json:"name"`
	UID            types.UID     `json:"uid"`
	UserID         string        `json:"userId"`
	Phase          string        `json:"phase"`
	Message        string        `json:"message,omitempty"`
	StartTime      *metav1.Time  `json:"startTime,omitempty"`
	CompletionTime *metav1.Time  `json:"completionTime,omitempty"`
	Duration       string        `json:"duration,omitempty"`
	Steps          []PayloadStep `json:"steps"`
}

// PayloadStep is one step in the completion webhook.
type PayloadStep struct {
	Name     string            `json:"name"`
	Phase    string            `json:"phase"`
	TaskName string            `json:"taskName,omitempty"`
	Attempts int32             `json:"attempts"`
	Output   map[string]string `json:"output,omitempty"`
	Message  string            `json:"message,omitempty"`
}

// payload builds the webhook body of a terminal workflow; it is identical on
// every attempt because it only reads stored, frozen status.
func payload(wf *v1alpha1.Workflow) ([]byte, error) {
	p := Payload{
		Kind: "Workflow", Namespace: wf.Namespace, Name: wf.Name, UID: wf.UID, UserID: wf.Spec.UserID,
		Phase: string(wf.Status.Phase), Message: wf.Status.Message, StartTime: wf.Status.StartTime,
		CompletionTime: wf.Status.CompletionTime, Duration: wf.Status.Duration, Steps: []PayloadStep{},
	}
	for _, s := range wf.Status.StepStatuses {
		p.Steps = append(p.Steps, PayloadStep{
			Name: s.Name, Phase: string(s.Phase), TaskName: s.TaskName, Attempts: s.Attempts, Output: s.Output, Message: s.Message,
		})
	}
	return json.Marshal(p)
}

// deliver makes one attempt of the completion webhook when one is due and
// records it in status.webhook; the work queue brings the next attempt.
func (r *Reconciler) deliver(ctx context.Context, wf *v1alpha1.Workflow) (ctrl.Result, error) {
	if wf.Spec.WebhookURL == "" || !webhook.Pending(wf.Status.Webhook) {
		return ctrl.Result{}, nil
	}
	policy := r.webhooks.policy
	if wait := policy.Next(wf.Status.Webhook, r.now()); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	body, err := payload(wf)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("encode webhook payload: %w", err)
	}
	var res webhook.Result
	secret, err := r.webhookSecret(ctx, wf)
	switch {
	case apierrors.IsNotFound(err) || errorsIsMissingKey(err):
		res = webhook.Result{Err: err}
	case err != nil:
		return ctrl.Result{}, err
	default:
		res = r.webhooks.sender.Send(ctx, webhook.Request{
			URL: wf.Spec.WebhookURL, Body: body, IdempotencyKey: string(wf.UID) + "/completion", Event: WebhookEvent, Secret: secret,
		})
	}
	status := wf.Status.DeepCopy()
	status.Webhook = policy.Record(wf.Status.Webhook, res, r.now())
	logf.FromContext(ctx).Info("completion webhook attempt", "attempt", status.Webhook.Attempts,
		"delivered", status.Webhook.Delivered, "statusCode", res.StatusCode, "gaveUp", status.Webhook.GaveUp)
	if written, err := r.writeStatus(ctx, wf, status); err != nil || !written {
		// Not recorded: the workflow changed meanwhile and its update event
		// brings the next attempt, with the same idempotency key.
		return ctrl.Result{}, err
	}
	if status.Webhook.GaveUp {
		r.recorder.Eventf(wf, nil, corev1.EventTypeWarning, "WebhookFailed", "DeliverWebhook",
			"completion webhook not delivered after %d attempts: %s", status.Webhook.Attempts, status.Webhook.LastError)
	}
	if webhook.Pending(status.Webhook) {
		return ctrl.Result{RequeueAfter: max(policy.Next(status.Webhook, r.now()), 1)}, nil
	}
	return ctrl.Result{}, nil
}

// missingKeyError is a webhookSecretRef whose Secret lacks the key.
type missingKeyError struct{ name, key string }

func (e missingKeyError) Error() string {
	return fmt.Sprintf("webhook secret %s has no key %q", e.name, e.key)
}

func errorsIsMissingKey(err error) bool {
	var mk missingKeyError
	return errors.As(err, &mk)
}

// webhookSecret reads the signing key with a direct get: Secrets are never
// cached by this manager.
func (r *Reconciler) webhookSecret(ctx context.Context, wf *v1alpha1.Workflow) ([]byte, error) {
	ref := wf.Spec.WebhookSecretRef
	if ref == nil {
		return nil, nil
	}
	var s corev1.Secret
	if err := r.secrets.Get(ctx, types.NamespacedName{Namespace: wf.Namespace, Name: ref.Name}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("webhook secret %s: %w", ref.Name, err)
		}
		return nil, fmt.Errorf("get webhook secret %s: %w", ref.Name, err)
	}
	v, ok := s.Data[ref.Key]
	if !ok {
		return nil, missingKeyError{name: ref.Name, key: ref.Key}
	}
	return v, nil
}
