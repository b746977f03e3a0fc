package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/webhook"
)

// WebhookEvent is the X-Opsnorth-Event of a workflow completion webhook.
const WebhookEvent = "workflow.completed"

// Payload is the body of the completion webhook.
type Payload struct {
	Kind           string        `json:"kind"`
	Namespace      string        `json:"namespace"`
	Name           string        `json:"name"`
	UID            types.UID     `json:"uid"`
	UserID         string        `json:"userId"`
	Phase          string        `json:"phase"`
	Reason         string        `json:"reason,omitempty"`
	Retries        int32         `json:"retries,omitempty"`
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
		Retries: wf.Status.Retries,
	}
	if c := meta.FindStatusCondition(wf.Status.Conditions, v1alpha1.ConditionReady); c != nil {
		p.Reason = c.Reason
	}
	for _, s := range wf.Status.StepStatuses {
		p.Steps = append(p.Steps, PayloadStep{
			Name: s.Name, Phase: string(s.Phase), TaskName: s.TaskName, Attempts: s.Attempts, Output: s.Output, Message: s.Message,
		})
	}
	return json.Marshal(p)
}

// webhookDue reports whether wf's completion webhook still has to be delivered.
func webhookDue(wf *v1alpha1.Workflow) bool {
	return wf.Status.Phase.IsTerminal() && wf.Spec.WebhookURL != "" && webhook.Pending(wf.Status.Webhook)
}

// deliveries adapts Workflows to the webhook delivery service.
type deliveries struct{ r *Reconciler }

// Load reads the workflow live, so an attempt recorded a moment ago is seen.
func (d deliveries) Load(ctx context.Context, key types.NamespacedName) (*webhook.Delivery, error) {
	wf, err := d.r.client.SchedulerV1alpha1().Workflows(key.Namespace).Get(ctx, key.Name, getOptions)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get workflow %s: %w", key, err)
	}
	if !webhookDue(wf) {
		return nil, nil
	}
	body, err := payload(wf)
	if err != nil {
		return nil, fmt.Errorf("encode webhook payload: %w", err)
	}
	return &webhook.Delivery{
		Object: wf, URL: wf.Spec.WebhookURL, SecretRef: wf.Spec.WebhookSecretRef, UserID: wf.Spec.UserID,
		Body: body, IdempotencyKey: idempotencyKey(wf), State: wf.Status.Webhook,
	}, nil
}

// idempotencyKey names the completion of the workflow's current run: each
// retry ends in a completion of its own.
func idempotencyKey(wf *v1alpha1.Workflow) string {
	if wf.Status.Retries == 0 {
		return string(wf.UID) + "/completion"
	}
	return fmt.Sprintf("%s/completion-retry-%d", wf.UID, wf.Status.Retries)
}

// errChanged is a status write refused because the workflow changed since it was read.
var errChanged = errors.New("workflow changed since it was read")

// Record writes the attempt and the WebhookDelivered condition.
func (d deliveries) Record(ctx context.Context, del *webhook.Delivery, state *v1alpha1.WebhookDelivery) error {
	wf := del.Object.(*v1alpha1.Workflow)
	status := wf.Status.DeepCopy()
	status.Webhook = state
	meta.SetStatusCondition(&status.Conditions, webhook.Condition(state, wf.Generation))
	written, err := d.r.writeStatus(ctx, wf, status)
	if err == nil && !written {
		return errChanged
	}
	return err
}
