package tasks_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/testkit"
	"opsnorth.io/scheduler/pkg/webhook"
)

// TestGeneratedRBACSuffices runs the controller as a user holding only the
// generated manifests/rbac/tasks roles, through a whole task lifecycle with
// a signed webhook: the +kubebuilder:rbac markers are what the code needs.
func TestGeneratedRBACSuffices(t *testing.T) {
	k := newCluster(t, "agent-tasks") // the namespace of the generated Role
	startManagerAs(t, testkit.ManagerConfig(t, testenv.Require(t), "tasks", k.ns), k.ns, testArgs(true)...)

	mine := map[string]string{labelkeys.User: "user-1"}
	require.NoError(t, k.c.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hook", Namespace: k.ns, Labels: mine}, Data: map[string][]byte{"token": []byte("s")},
	}))
	require.NoError(t, k.c.Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: k.ns, Labels: mine}}))
	rcv := testkit.NewReceiver(t, testkit.OK)
	k.createTask("least", func(at *v1alpha1.AgentTask) {
		at.Spec.ServiceAccountName = "agent" // its labels are read before the Job is created
		at.Spec.WebhookURL = rcv.URL
		at.Spec.WebhookSecretRef = &v1alpha1.SecretKeyReference{Name: "hook", Key: "token"}
	})
	k.succeed("least", `{"ok":"yes"}`)
	task := k.waitWebhook("least", func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered || d.GaveUp })
	require.True(t, task.Status.Webhook.Delivered, "webhook: %+v", task.Status.Webhook)
	assert.Equal(t, v1alpha1.TaskSucceeded, task.Status.Phase)
	reqs := rcv.Requests()
	require.Len(t, reqs, 1)
	assert.NoError(t, webhook.Verify("s", reqs[0].Header, reqs[0].Body, reqs[0].At, webhook.DefaultTolerance))
	require.Eventually(t, func() bool {
		list := &eventsv1.EventList{}
		require.NoError(t, k.c.List(t.Context(), list, client.InNamespace(k.ns)))
		for _, e := range list.Items {
			if e.Regarding.Name == "least" && e.Reason == "WebhookDelivered" {
				return true
			}
		}
		return false
	}, wait, 100*time.Millisecond, "the manager may record events")
}
