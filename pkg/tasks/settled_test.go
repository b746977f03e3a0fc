package tasks_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testkit"
)

// taskNames lists the names of the tasks a field selector picks.
func (k *cluster) taskNames(selector string) []string {
	k.t.Helper()
	list, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).List(context.Background(), metav1.ListOptions{FieldSelector: selector})
	require.NoError(k.t, err)
	var names []string
	for _, task := range list.Items {
		names = append(names, task.Name)
	}
	slices.Sort(names)
	return names
}

// TestSettled: a task the manager is done with says so in status.settled,
// a field users can select on; the manager stops watching it; a task an
// older manager finished without the field is settled with one write.
func TestSettled(t *testing.T) {
	k := newCluster(t, "tasks-settled")

	// Finished before this manager ran, by a manager that knew no
	// status.settled.
	legacy := k.createTask("legacy")
	legacy.Status = v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskSucceeded, Reason: "Completed",
		Output: map[string]string{"answer": "42"}, CompletionTime: &metav1.Time{Time: time.Now().Truncate(time.Second)}}
	legacy, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).UpdateStatus(t.Context(), legacy, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.False(t, legacy.Status.Settled)

	startManager(t, k.ns, testArgs(true)...)
	rcv := testkit.NewReceiver(t, testkit.FailFirst(1, http.StatusServiceUnavailable))
	k.createTask("hooked", func(at *v1alpha1.AgentTask) { at.Spec.WebhookURL = rcv.URL })
	k.createTask("plain")
	k.createTask("idle")
	k.runPod(k.job("idle"), time.Now())
	k.waitPhase("idle", v1alpha1.TaskRunning)

	k.succeed("plain", "")
	plain := k.waitPhase("plain", v1alpha1.TaskSucceeded)
	assert.True(t, plain.Status.Settled, "a task without a webhook settles with its terminal status")

	k.succeed("hooked", "")
	failed := k.waitWebhook("hooked", func(d *v1alpha1.WebhookDelivery) bool { return d.Attempts >= 1 })
	if !failed.Status.Webhook.Delivered {
		assert.False(t, failed.Status.Settled, "a webhook still due keeps the task unsettled")
	}
	hooked := k.waitWebhook("hooked", func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered })
	assert.True(t, hooked.Status.Settled, "settled once the webhook was delivered")

	require.Eventually(t, func() bool { return k.task("legacy").Status.Settled }, wait, 50*time.Millisecond,
		"the legacy task was never settled")
	settledLegacy := k.task("legacy")
	assert.Equal(t, legacy.Status.Phase, settledLegacy.Status.Phase)
	assert.Equal(t, legacy.Status.Output, settledLegacy.Status.Output)
	assert.True(t, legacy.Status.CompletionTime.Equal(settledLegacy.Status.CompletionTime))

	assert.Equal(t, []string{"hooked", "legacy", "plain"}, k.taskNames("status.settled=true"))
	assert.Equal(t, []string{"idle"}, k.taskNames("status.settled!=true"))

	// A settled task has left the manager's watch: a change to it is not
	// reconciled (an unsettled task's is, the control).
	before := quietReconciles(t)
	for _, name := range []string{"plain", "hooked", "legacy"} {
		touch(t, k, name)
	}
	assert.Never(t, func() bool { return reconcileCount(t) != before }, settle, 50*time.Millisecond,
		"a change to a settled task was reconciled")
	touch(t, k, "idle")
	assert.Eventually(t, func() bool { return reconcileCount(t) > before }, wait, 50*time.Millisecond,
		"a change to an unsettled task was not reconciled")
}

// touch annotates a task, as a user's tooling might.
func touch(t *testing.T, k *cluster, name string) {
	t.Helper()
	task := k.task(name)
	metav1.SetMetaDataAnnotation(&task.ObjectMeta, "example.com/touched", "yes")
	_, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Update(t.Context(), task, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// quietReconciles waits until the manager has stopped reconciling (no
// reconcile for a second) and returns the reconcile count.
func quietReconciles(t *testing.T) float64 {
	t.Helper()
	deadline := time.Now().Add(wait)
	for count := reconcileCount(t); time.Now().Before(deadline); {
		time.Sleep(time.Second)
		now := reconcileCount(t)
		if now == count {
			return count
		}
		count = now
	}
	require.FailNow(t, "the manager never stopped reconciling")
	return 0
}
