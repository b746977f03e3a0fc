package tasks_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/refusal"
	"opsnorth.io/scheduler/pkg/testkit"
)

// TestJobRefusals: a Job the API server refuses for good fails its task at
// once with the server's message; a refusal that can heal (quota) keeps the
// task Pending with the reason in its message, and the Job is created once
// the quota allows it.
func TestJobRefusals(t *testing.T) {
	k := newCluster(t, "tasks-refused")
	probe := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "denied", Namespace: k.ns},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
		}}},
	}
	testkit.DenyCreate(t, k.c, k.ns, "batch", "jobs", `object.metadata.name != "denied"`, "this namespace runs no Job named denied", probe)
	testkit.SetQuota(t, k.c, k.ns, "count/jobs.batch", 0)
	startManager(t, k.ns, testArgs(false)...)

	k.createTask("denied")
	failed := k.waitPhase("denied", v1alpha1.TaskFailed)
	assert.Equal(t, refusal.ReasonAdmissionDenied, failed.Status.Reason)
	assert.Contains(t, failed.Status.Message, "the API server refused the task's Job: ")
	assert.Contains(t, failed.Status.Message, "denied request: this namespace runs no Job named denied")
	assert.Empty(t, k.jobsOf("denied"))

	k.createTask("queued")
	pending := testkit.WaitFor(t, wait, func() *v1alpha1.AgentTask { return k.task("queued") },
		func(at *v1alpha1.AgentTask) bool { return at.Status.Message != "" }, "the task never said why it waits")
	assert.Equal(t, v1alpha1.TaskPending, pending.Status.Phase)
	assert.Contains(t, pending.Status.Message, "the API server refused the task's Job (QuotaExceeded), retrying: ")
	assert.Contains(t, pending.Status.Message, "exceeded quota: test-quota")

	testkit.SetQuota(t, k.c, k.ns, "count/jobs.batch", 5)
	k.job("queued")
}
