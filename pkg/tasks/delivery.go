package tasks

import (
	"context"
	"encoding/json"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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

// webhookDue reports whether task's completion webhook still has to be delivered.
func webhookDue(task *v1alpha1.AgentTask) bool {
	return task.Status.Phase.IsTerminal() && !settled(&task.Status, task)
}

// deliveries adapts AgentTasks to the webhook delivery service.
type deliveries struct{ r *Reconciler }

// Load reads the task live: the cache holds a trimmed terminal task, and may
// not show an attempt recorded a moment ago.
func (d deliveries) Load(ctx context.Context, key types.NamespacedName) (*webhook.Delivery, error) {
	live, err := d.r.clientset.SchedulerV1alpha1().AgentTasks(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, countError(key.Namespace, errorf(errAPIRead, "get agenttask %s: %w", key, err))
	}
	if !webhookDue(live) {
		return nil, nil
	}
	body, err := BuildPayload(live)
	if err != nil {
		return nil, err
	}
	return &webhook.Delivery{
		Object: live, URL: live.Spec.WebhookURL, SecretRef: live.Spec.WebhookSecretRef, UserID: live.Spec.UserID,
		Body: body, IdempotencyKey: IdempotencyKey(live), State: live.Status.Webhook,
	}, nil
}

// Record writes the attempt with the WebhookDelivered condition and, once
// the delivery is done, Settled, in one status write.
func (d deliveries) Record(ctx context.Context, del *webhook.Delivery, state *v1alpha1.WebhookDelivery) error {
	live := del.Object.(*v1alpha1.AgentTask)
	st := *live.Status.DeepCopy()
	st.Webhook = state
	summarize(&st, live)
	_, err := d.r.applyStatus(ctx, live, st)
	return countError(live.Namespace, err)
}
