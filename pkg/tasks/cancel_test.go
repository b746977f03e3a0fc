package tasks_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tasks"
	"opsnorth.io/scheduler/pkg/testkit"
)

// cancel sets the task's spec.cancel as a user does.
func (k *cluster) cancel(name string) {
	k.t.Helper()
	patch := []byte(`{"spec":{"cancel":true}}`)
	_, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Patch(k.t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{})
	require.NoError(k.t, err)
}

// jobStopped: the task's Job is deleted (its pods go with it).
func (k *cluster) jobStopped(name string) {
	k.t.Helper()
	require.Eventually(k.t, func() bool {
		job := &batchv1.Job{}
		err := k.c.Get(k.t.Context(), types.NamespacedName{Namespace: k.ns, Name: name}, job)
		return apierrors.IsNotFound(err) || (err == nil && job.DeletionTimestamp != nil)
	}, wait, 50*time.Millisecond, "job %s never stopped", name)
}

func TestCancel(t *testing.T) {
	k := newCluster(t, "tasks-cancel")
	startManager(t, k.ns, testArgs(true)...)

	t.Run("a running task stops and says so, webhook included", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		hook := testkit.NewReceiver(t, testkit.OK)
		k.createTask("running", func(at *v1alpha1.AgentTask) { at.Spec.WebhookURL = hook.URL })
		job := k.job("running")
		pod := k.runPod(job, time.Now())
		k.waitPhase("running", v1alpha1.TaskRunning)
		k.cancel("running")
		task := k.waitPhase("running", v1alpha1.TaskFailed)
		assert.Equal(t, tasks.ReasonCancelled, task.Status.Reason)
		assert.Equal(t, "the task was cancelled (spec.cancel); its agent in pod "+pod.Name+" is stopped", task.Status.Message)
		assert.NotNil(t, task.Status.StartTime)
		k.jobStopped("running")
		task = k.waitWebhook("running", func(d *v1alpha1.WebhookDelivery) bool { return d.Delivered })
		reqs := hook.Requests()
		require.Len(t, reqs, 1)
		var payload tasks.Payload
		require.NoError(t, json.Unmarshal(reqs[0].Body, &payload))
		assert.Equal(t, v1alpha1.TaskFailed, payload.Phase)
		assert.Equal(t, tasks.ReasonCancelled, payload.Reason)
		assert.True(t, task.Status.Settled)
		assertTaskEvents(t, k, "running", "Failed", "WebhookDelivered")
	})
	t.Run("a task cancelled before its Job never gets one", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("early", func(at *v1alpha1.AgentTask) { at.Spec.Cancel = true })
		task := k.waitPhase("early", v1alpha1.TaskFailed)
		assert.Equal(t, tasks.ReasonCancelled, task.Status.Reason)
		assert.Equal(t, "the task was cancelled (spec.cancel) before its agent started", task.Status.Message)
		assert.Never(t, func() bool { return len(k.jobsOf("early")) > 0 }, settle, 100*time.Millisecond, "a Job was created")
	})
	t.Run("a pending task's Job is stopped", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("pending")
		k.job("pending")
		k.cancel("pending")
		task := k.waitPhase("pending", v1alpha1.TaskFailed)
		assert.Equal(t, tasks.ReasonCancelled, task.Status.Reason)
		k.jobStopped("pending")
	})
	t.Run("an ended task stays as it ended", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		k.createTask("done")
		k.succeed("done", `{"answer":"42"}`)
		k.waitPhase("done", v1alpha1.TaskSucceeded)
		k.cancel("done")
		assert.Never(t, func() bool { return k.task("done").Status.Phase != v1alpha1.TaskSucceeded }, settle, 100*time.Millisecond)
		job := &batchv1.Job{}
		require.NoError(t, k.c.Get(t.Context(), client.ObjectKey{Namespace: k.ns, Name: "done"}, job))
		assert.Nil(t, job.DeletionTimestamp)
	})
}
