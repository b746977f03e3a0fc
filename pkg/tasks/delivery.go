package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/webhook"
)

// WebhookEvent is the X-Opsnorth-Event of a task's completion webhook.
const WebhookEvent = "agenttask.completed"

// Payload is the JSON body of a task's completion webhook. It is built from
// the terminal status, which never changes, so every attempt sends the same bytes.
type Payload struct {
	Name           string             `json:"name"`
	Namespace      string             `json:"namespace"`
	UID            types.UID          `json:"uid"`
	TaskID         string             `json:"taskId"`
	UserID         string             `json:"userId"`
	Phase          v1alpha1.TaskPhase `json:"phase"`
	Reason         string             `json:"reason,omitempty"`
	Message        string             `json:"message,omitempty"`
	Output         map[string]string  `json:"output,omitempty"`
	ExitCode       *int32             `json:"exitCode,omitempty"`
	StartTime      *metav1.Time       `json:"startTime,omitempty"`
	CompletionTime *metav1.Time       `json:"completionTime,omitempty"`
}

// BuildPayload returns the webhook body of a terminal task.
func BuildPayload(task *v1alpha1.AgentTask) ([]byte, error) {
	st := task.Status
	return json.Marshal(Payload{
		Name: task.Name, Namespace: task.Namespace, UID: task.UID,
		TaskID: task.Spec.TaskID, UserID: task.Spec.UserID,
		Phase: st.Phase, Reason: st.Reason, Message: st.Message, Output: st.Output, ExitCode: st.ExitCode,
		StartTime: st.StartTime, CompletionTime: st.CompletionTime,
	})
}

// IdempotencyKey is the same on every attempt and after restarts: receivers
// drop duplicates by it.
func IdempotencyKey(task *v1alpha1.AgentTask) string { return string(task.UID) + "/completion" }

// deliverWebhook makes one attempt at the completion webhook when one is due
// and records it in status. It returns how long to wait for the next attempt.
func (r *Reconciler) deliverWebhook(ctx context.Context, s *scope) (time.Duration, error) {
	if !webhookDue(s.task) {
		return 0, nil
	}
	if wait := r.cfg.Webhook.Next(s.task.Status.Webhook, r.now()); wait > 0 {
		return wait, nil
	}
	// The cache may not show an attempt recorded a moment ago; the API
	// server does, so a delivered webhook is never sent again.
	live, err := r.clientset.SchedulerV1alpha1().AgentTasks(s.task.Namespace).Get(ctx, s.task.Name, metav1.GetOptions{})
	if err != nil {
		return 0, errorf(errAPIRead, "get agenttask %s: %w", describe(s.task), err)
	}
	if live.UID != s.task.UID || !webhookDue(live) {
		return 0, nil
	}
	now := r.now()
	if wait := r.cfg.Webhook.Next(live.Status.Webhook, now); wait > 0 {
		return wait, nil
	}
	res := r.send(ctx, live)
	rec := r.cfg.Webhook.Record(live.Status.Webhook, res, now)
	r.recordAttempt(ctx, live, res, rec)

	st := *live.Status.DeepCopy()
	st.Webhook = rec
	summarize(&st, live)
	if _, err := r.applyStatus(ctx, live, st); err != nil {
		return 0, err
	}
	if !webhook.Pending(rec) {
		return 0, nil
	}
	return max(r.cfg.Webhook.Next(rec, r.now()), time.Second), nil
}

func webhookDue(task *v1alpha1.AgentTask) bool {
	return task.Status.Phase.IsTerminal() && !settled(&task.Status, task)
}

// send makes one attempt. A refused address gives up at once: no retry
// changes where the receiver's name points to for the guard's sake.
func (r *Reconciler) send(ctx context.Context, task *v1alpha1.AgentTask) webhook.Result {
	body, err := BuildPayload(task)
	if err != nil {
		return webhook.Result{Err: fmt.Errorf("build payload: %w", err)}
	}
	req := webhook.Request{URL: task.Spec.WebhookURL, Body: body, IdempotencyKey: IdempotencyKey(task), Event: WebhookEvent}
	if ref := task.Spec.WebhookSecretRef; ref != nil {
		secret, err := r.secretValue(ctx, task.Namespace, ref)
		if err != nil {
			ErrorsTotal.WithLabelValues(errWebhookSetup).Inc()
			return webhook.Result{Err: err}
		}
		req.Secret = secret
	}
	return r.sender.Send(ctx, req)
}

// secretValue reads the signing key with an uncached GET: the manager needs
// no cluster-wide watch on Secrets, only get in the task namespaces.
func (r *Reconciler) secretValue(ctx context.Context, namespace string, ref *v1alpha1.SecretKeyReference) ([]byte, error) {
	secret := &corev1.Secret{}
	if err := r.apiReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, secret); err != nil {
		return nil, fmt.Errorf("read webhook secret %s/%s: %w", namespace, ref.Name, err)
	}
	value, ok := secret.Data[ref.Key]
	if !ok || len(value) == 0 {
		return nil, fmt.Errorf("webhook secret %s/%s has no key %q", namespace, ref.Name, ref.Key)
	}
	return value, nil
}

// recordAttempt counts an attempt, gives up on a refused address and reports failures as events.
func (r *Reconciler) recordAttempt(ctx context.Context, task *v1alpha1.AgentTask, res webhook.Result, rec *v1alpha1.WebhookDelivery) {
	log := ctrl.LoggerFrom(ctx)
	switch {
	case res.Delivered():
		WebhookDeliveriesTotal.WithLabelValues("delivered").Inc()
		log.Info("webhook delivered", "attempts", rec.Attempts, "statusCode", rec.LastStatusCode)
		r.event(task, corev1.EventTypeNormal, "WebhookDelivered", "DeliverWebhook",
			fmt.Sprintf("completion webhook delivered after %d attempt(s)", rec.Attempts))
		return
	case errors.Is(res.Err, webhook.ErrAddressRefused):
		WebhookDeliveriesTotal.WithLabelValues("refused").Inc()
		rec.GaveUp = true
	default:
		WebhookDeliveriesTotal.WithLabelValues("failed").Inc()
	}
	log.Info("webhook attempt failed", "attempts", rec.Attempts, "statusCode", rec.LastStatusCode, "error", rec.LastError)
	reason, note := "WebhookFailed", fmt.Sprintf("completion webhook attempt %d of %d failed: %s", rec.Attempts, r.cfg.Webhook.MaxAttempts, rec.LastError)
	if rec.GaveUp {
		reason, note = "WebhookGaveUp", fmt.Sprintf("gave up the completion webhook after %d attempt(s): %s", rec.Attempts, rec.LastError)
	}
	r.event(task, corev1.EventTypeWarning, reason, "DeliverWebhook", note)
}
