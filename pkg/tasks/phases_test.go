package tasks_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/tasks"
)

// TestJobShape: the Job the API server stores for a task with every field set.
func TestJobShape(t *testing.T) {
	k := newCluster(t, "tasks-shape")
	// What the task names must exist, labelled for its user (see TestReferencesInTheSharedNamespace).
	mine := map[string]string{labelkeys.User: "user-1"}
	require.NoError(t, k.c.Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "agent-sa", Namespace: k.ns, Labels: mine}}))
	require.NoError(t, k.c.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "regcred", Namespace: k.ns, Labels: mine}}))
	startManager(t, k.ns, testArgs(false)...)
	task := k.createTask("full", func(at *v1alpha1.AgentTask) {
		at.Spec.Command = []string{"/agent"}
		at.Spec.Args = []string{"--fast"}
		at.Spec.Input = map[string]string{"PROMPT": "hi", "A_FIRST": "1"}
		at.Spec.TimeoutSeconds = ptr.To[int64](600)
		at.Spec.TTLSecondsAfterFinished = ptr.To[int32](60)
		at.Spec.ServiceAccountName = "agent-sa"
		at.Spec.ImagePullSecrets = []string{"regcred"}
		at.Spec.Resources = &v1alpha1.ResourceRequirements{
			Requests: &v1alpha1.ResourceAmounts{CPU: ptr.To(resource.MustParse("500m"))},
			Limits:   &v1alpha1.ResourceAmounts{Memory: ptr.To(resource.MustParse("1Gi"))},
		}
	})
	job := k.job("full")
	require.Len(t, job.OwnerReferences, 1)
	assert.Equal(t, task.UID, job.OwnerReferences[0].UID)
	assert.True(t, *job.OwnerReferences[0].Controller)
	assert.True(t, *job.OwnerReferences[0].BlockOwnerDeletion)
	assert.Equal(t, int32(0), *job.Spec.BackoffLimit)
	assert.Equal(t, int32(60), *job.Spec.TTLSecondsAfterFinished)
	assert.Equal(t, int64(600), *job.Spec.ActiveDeadlineSeconds)
	for key, want := range map[string]string{
		"task_id": "id-full", "user_id": "user-1", "managed-by": "opsnorth-scheduler",
		"app.kubernetes.io/managed-by": "opsnorth-scheduler", "app.kubernetes.io/component": "agent",
		"app.kubernetes.io/instance": "full",
	} {
		assert.Equal(t, want, job.Labels[key], key)
		assert.Equal(t, want, job.Spec.Template.Labels[key], key)
	}
	pod := job.Spec.Template.Spec
	assert.Equal(t, corev1.RestartPolicyNever, pod.RestartPolicy)
	assert.Equal(t, "agent-sa", pod.ServiceAccountName)
	assert.Equal(t, []corev1.LocalObjectReference{{Name: "regcred"}}, pod.ImagePullSecrets)
	assert.True(t, *pod.SecurityContext.RunAsNonRoot)
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	assert.Equal(t, "agent", c.Name)
	assert.Equal(t, "ghcr.io/acme/agent:1.2", c.Image)
	assert.Equal(t, []string{"/agent"}, c.Command)
	assert.Equal(t, []string{"--fast"}, c.Args)
	assert.Equal(t, []corev1.EnvVar{{Name: "A_FIRST", Value: "1"}, {Name: "PROMPT", Value: "hi"}}, c.Env)
	assert.Equal(t, "500m", ptr.To(c.Resources.Requests[corev1.ResourceCPU]).String())
	assert.Equal(t, "1Gi", ptr.To(c.Resources.Limits[corev1.ResourceMemory]).String())
	assert.False(t, *c.SecurityContext.AllowPrivilegeEscalation)
	assert.Equal(t, []corev1.Capability{"ALL"}, c.SecurityContext.Capabilities.Drop)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, pod.SecurityContext.SeccompProfile.Type)

	pending := k.waitPhase("full", v1alpha1.TaskPending)
	assert.Equal(t, "full", pending.Status.JobName)
	assert.True(t, meta.IsStatusConditionTrue(pending.Status.Conditions, v1alpha1.ConditionReconciling))
}

// TestPhases drives one task down each path the Job and pod can take.
func TestPhases(t *testing.T) {
	k := newCluster(t, "tasks-phases")
	startManager(t, k.ns, testArgs(false)...)
	started := time.Now().Add(-time.Minute).Truncate(time.Second)

	run := func(k *cluster, name string, mutate ...func(*v1alpha1.AgentTask)) (*batchv1.Job, *corev1.Pod) {
		t := k.t
		k.createTask(name, mutate...)
		job := k.job(name)
		k.waitPhase(name, v1alpha1.TaskPending)
		pod := k.runPod(job, started)
		running := k.waitPhase(name, v1alpha1.TaskRunning)
		assert.Equal(t, pod.Name, running.Status.PodName)
		assert.True(t, running.Status.StartTime.Time.Equal(started), "startTime %v", running.Status.StartTime)
		return job, pod
	}

	t.Run("succeeded with JSON output", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		completed := testutil.ToFloat64(tasks.CompletedTotal.WithLabelValues(k.ns, "Succeeded"))
		job, pod := run(k, "ok")
		k.terminatePod(pod, 0, `{"answer":"42","note":"done"}`)
		k.completeJob(job, started.Add(30*time.Second))
		task := k.waitPhase("ok", v1alpha1.TaskSucceeded)
		assert.Equal(t, map[string]string{"answer": "42", "note": "done"}, task.Status.Output)
		assert.Equal(t, int32(0), *task.Status.ExitCode)
		assert.Equal(t, tasks.ReasonCompleted, task.Status.Reason)
		// The pod decided: the completion is the agent's finish, not the Job's.
		finished := k.podStatus(pod).ContainerStatuses[0].State.Terminated.FinishedAt
		assert.True(t, task.Status.CompletionTime.Equal(&finished), "completion %v, agent finished %v", task.Status.CompletionTime, finished)
		assert.Equal(t, task.Status.CompletionTime.Sub(task.Status.StartTime.Time).String(), task.Status.Duration, "the agent's run time")
		assert.True(t, meta.IsStatusConditionTrue(task.Status.Conditions, v1alpha1.ConditionReady))
		assert.Nil(t, meta.FindStatusCondition(task.Status.Conditions, v1alpha1.ConditionReconciling))
		// Counted after the status write returns: it may trail the status by a moment.
		assert.Eventually(t, func() bool {
			return testutil.ToFloat64(tasks.CompletedTotal.WithLabelValues(k.ns, "Succeeded"))-completed >= 1
		}, wait, 20*time.Millisecond, "tasks completed counter")
	})
	t.Run("non-zero exit", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		job, pod := run(k, "exit3")
		k.terminatePod(pod, 3, "model quota exhausted")
		k.failJob(job, batchv1.JobReasonBackoffLimitExceeded)
		task := k.waitPhase("exit3", v1alpha1.TaskFailed)
		assert.Equal(t, int32(3), *task.Status.ExitCode)
		assert.Equal(t, "Error", task.Status.Reason)
		assert.Equal(t, "the agent exited with code 3 (Error)", task.Status.Message)
		assert.Equal(t, map[string]string{"result": "model quota exhausted"}, task.Status.Output)
		ready := meta.FindStatusCondition(task.Status.Conditions, v1alpha1.ConditionReady)
		require.NotNil(t, ready)
		assert.Equal(t, metav1.ConditionFalse, ready.Status)
		assert.Equal(t, "Error", ready.Reason)
	})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		job, pod := run(k, "slow", func(at *v1alpha1.AgentTask) { at.Spec.TimeoutSeconds = ptr.To[int64](5) })
		// The Job controller marks the deadline, then deletes the pod.
		k.failJob(job, batchv1.JobReasonDeadlineExceeded)
		k.deletePod(pod)
		task := k.waitPhase("slow", v1alpha1.TaskTimeout)
		assert.Equal(t, tasks.ReasonDeadlineExceeded, task.Status.Reason)
		assert.Equal(t, "the task ran longer than its timeout of 5s", task.Status.Message)
		assert.Nil(t, task.Status.ExitCode)
	})
	t.Run("pod deleted while running", func(t *testing.T) {
		t.Parallel()
		k := k.with(t)
		_, pod := run(k, "orphan")
		k.deletePod(pod)
		task := k.waitPhase("orphan", v1alpha1.TaskFailed)
		assert.Equal(t, tasks.ReasonPodDeleted, task.Status.Reason)
		assert.Equal(t, "pod "+pod.Name+" was deleted before the agent finished", task.Status.Message)
		// Terminal is final: the Job's later failure changes nothing.
		k.failJob(k.job("orphan"), batchv1.JobReasonBackoffLimitExceeded)
		// The manager reconciles the task on the Job's update, at a moment
		// the test cannot see: watch the status for a while.
		assert.Never(t, func() bool {
			return !assert.ObjectsAreEqual(task.Status, k.task("orphan").Status)
		}, settle, 100*time.Millisecond, "the terminal status changed")
		assert.Equal(t, task.Status, k.task("orphan").Status)
	})
}

// TestOutputs: each kind of termination message ends up in status.output.
func TestOutputs(t *testing.T) {
	k := newCluster(t, "tasks-outputs")
	startManager(t, k.ns, testArgs(false)...)
	for name, tc := range map[string]struct {
		message string
		want    map[string]string
	}{
		"json":      {`{"summary":"ok","url":"https://x"}`, map[string]string{"summary": "ok", "url": "https://x"}},
		"text":      {"all done\n", map[string]string{"result": "all done"}},
		"empty":     {"", nil},
		"malformed": {`{"summary": "unterminated`, map[string]string{"result": `{"summary": "unterminated`}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			k := k.with(t)
			k.createTask(name)
			job := k.job(name)
			pod := k.runPod(job, time.Now())
			k.terminatePod(pod, 0, tc.message)
			k.completeJob(job, time.Now())
			task := k.waitPhase(name, v1alpha1.TaskSucceeded)
			assert.Equal(t, tc.want, task.Status.Output)
		})
	}
}
