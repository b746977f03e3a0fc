package tasks

import (
	"encoding/json"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func TestTrimTask(t *testing.T) {
	running := fullTask()
	running.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	running.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}"}
	running.Labels = map[string]string{"team": "search"}
	running.Finalizers = []string{"example.com/audit"}
	running.OwnerReferences = []metav1.OwnerReference{{APIVersion: "scheduler.opsnorth.io/v1alpha1", Kind: "Workflow", Name: "wf", UID: "u"}}
	running.Status.Phase = v1alpha1.TaskRunning
	out, err := trimTask(running.DeepCopy())
	require.NoError(t, err)
	got := out.(*v1alpha1.AgentTask)
	assert.Equal(t, metav1.ObjectMeta{Name: running.Name, Namespace: running.Namespace, UID: running.UID,
		Generation: running.Generation, ResourceVersion: running.ResourceVersion, CreationTimestamp: running.CreationTimestamp},
		got.ObjectMeta, "identity and times only")
	assert.Equal(t, running.Spec, got.Spec, "a task that may still need its Job keeps its whole spec")
	assert.Equal(t, running.Status, got.Status)

	withJob := running.DeepCopy()
	withJob.Status.JobName = "summarise"
	out, err = trimTask(withJob.DeepCopy())
	require.NoError(t, err)
	got = out.(*v1alpha1.AgentTask)
	assert.Equal(t, v1alpha1.AgentTaskSpec{TaskID: "t-1", UserID: "u-1", TimeoutSeconds: ptr.To[int64](600)}, got.Spec,
		"a task whose Job exists keeps what its status needs")
	assert.Equal(t, withJob.Status, got.Status)

	done := running.DeepCopy()
	done.Status = v1alpha1.AgentTaskStatus{
		Phase: v1alpha1.TaskSucceeded, Reason: ReasonCompleted, Message: "the agent completed successfully",
		Output: map[string]string{"summary": "long text"}, JobName: "summarise", PodName: "summarise-x",
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}},
		Webhook:    &v1alpha1.WebhookDelivery{Attempts: 1},
	}
	done.Spec.WebhookURL = "https://example.com/hook"
	out, err = trimTask(done.DeepCopy())
	require.NoError(t, err)
	got = out.(*v1alpha1.AgentTask)
	assert.Equal(t, v1alpha1.AgentTaskSpec{TaskID: done.Spec.TaskID, UserID: done.Spec.UserID, WebhookURL: done.Spec.WebhookURL}, got.Spec,
		"a finished task keeps its ids and webhook URL only")
	assert.Equal(t, v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskSucceeded, Reason: ReasonCompleted, Webhook: done.Status.Webhook}, got.Status,
		"a finished task keeps what decides whether its webhook is due")
	assert.True(t, webhookDue(got), "the webhook is still due from the trimmed copy")
	assert.Equal(t, done.Name, got.Name)
	assert.Equal(t, done.UID, got.UID)
	assert.Nil(t, got.Annotations)
}

func TestTrimJob(t *testing.T) {
	full := BuildJob(fullTask(), DefaultConfig(), nil)
	full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "x"}}
	full.Status.Conditions = []batchv1.JobCondition{
		cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached"), cond(batchv1.JobComplete, "CompletionsReached"),
		{Type: batchv1.JobFailed, Status: corev1.ConditionFalse},
	}
	out, err := trimJob(full.DeepCopy())
	require.NoError(t, err)
	job := out.(*batchv1.Job)
	assert.Empty(t, job.Spec.Template.Spec.Containers, "the pod template (and the task's input) is not cached")
	assert.Nil(t, job.ManagedFields)
	assert.Equal(t, full.OwnerReferences, job.OwnerReferences)
	assert.Nil(t, job.Labels, "the cache selected on the labels already")
	want := full.Status.DeepCopy()
	want.Conditions = want.Conditions[1:2]
	assert.Equal(t, *want, job.Status, "only the true conditions a phase follows are kept")
}

func TestTrimPod(t *testing.T) {
	p := pod(corev1.PodRunning, running())
	p.Spec = BuildJob(fullTask(), DefaultConfig(), nil).Spec.Template.Spec
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler"},
	}
	p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "sidecar"})
	p.Status.ContainerStatuses[0].Image = "ghcr.io/acme/agent:1.2"
	out, err := trimPod(p.DeepCopy())
	require.NoError(t, err)
	got := out.(*corev1.Pod)
	assert.Equal(t, corev1.PodSpec{}, got.Spec)
	assert.Equal(t, []corev1.PodCondition{p.Status.Conditions[1]}, got.Status.Conditions)
	assert.Equal(t, []corev1.ContainerStatus{{Name: ContainerName, State: running()}}, got.Status.ContainerStatuses)
	assert.Equal(t, corev1.PodRunning, got.Status.Phase)
	// Everything the status is computed from survives the trim.
	task := fullTask()
	job := job()
	want, trimmed := ComputeStatus(task, Observation{Job: job, Pod: p, Now: now}), ComputeStatus(task, Observation{Job: job, Pod: got, Now: now})
	want.Conditions, trimmed.Conditions = nil, nil
	assert.Equal(t, want, trimmed)
	assert.Equal(t, ReasonEvicted, trimmed.Reason)
}

func TestNewestPod(t *testing.T) {
	mk := func(name string, age time.Duration, deleting bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(-age))}}
		if deleting {
			p.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
		}
		return p
	}
	assert.Nil(t, newestPod(nil))
	assert.Equal(t, "new", newestPod([]corev1.Pod{mk("old", time.Hour, false), mk("new", time.Minute, false)}).Name)
	assert.Equal(t, "old", newestPod([]corev1.Pod{mk("old", time.Hour, false), mk("new", time.Minute, true)}).Name)
	assert.Equal(t, "new", newestPod([]corev1.Pod{mk("old", time.Hour, true), mk("new", time.Minute, true)}).Name)
}

func TestPodJobName(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "v1", Kind: "Node", Name: "n"},
		{APIVersion: "batch/v1", Kind: "Job", Name: "summarise", Controller: ptr.To(true)},
	}}}
	assert.Equal(t, []string{"summarise"}, podJobName(p))
	assert.Nil(t, podJobName(&corev1.Pod{}))
	p.Namespace = "agent-tasks"
	key, err := podJobKey(p)
	require.NoError(t, err)
	assert.Equal(t, []string{"agent-tasks/summarise"}, key)
}

func TestCacheSelectsUnfinishedPods(t *testing.T) {
	var o metav1.ListOptions
	selectUnfinishedPods(&o)
	field, err := fields.ParseSelector(o.FieldSelector)
	require.NoError(t, err)
	label, err := labels.Parse(o.LabelSelector)
	require.NoError(t, err)
	for phase, cached := range map[corev1.PodPhase]bool{
		corev1.PodPending: true, corev1.PodRunning: true, corev1.PodUnknown: true,
		corev1.PodSucceeded: false, corev1.PodFailed: false,
	} {
		assert.Equal(t, cached, field.Matches(fields.Set{"status.phase": string(phase)}), "a %s pod is cached", phase)
	}
	assert.True(t, label.Matches(labels.Set(jobLabels(fullTask()))), "a task's pod is cached")
	assert.False(t, label.Matches(labels.Set{"app": "other"}))
}

func TestPodTask(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "agent-tasks", Name: "summarise-x7k2p", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "batch/v1", Kind: "Job", Name: "summarise", Controller: ptr.To(true)},
	}}}
	got := podTask(t.Context(), p)
	require.Len(t, got, 1)
	assert.Equal(t, "agent-tasks/summarise", got[0].String(), "a pod maps to the task its Job is named after")
	assert.Empty(t, podTask(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stray"}}))
}

func TestPayload(t *testing.T) {
	task := fullTask()
	task.Status = v1alpha1.AgentTaskStatus{
		Phase: v1alpha1.TaskFailed, Reason: "Error", Message: "the agent exited with code 3 (Error)",
		Output: map[string]string{"b": "2", "a": "1"}, ExitCode: ptr.To[int32](3),
		StartTime: at(0), CompletionTime: at(time.Minute),
		Webhook: &v1alpha1.WebhookDelivery{Attempts: 4},
	}
	body, err := BuildPayload(task)
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"name":"summarise","namespace":"agent-tasks","uid":"uid-1","taskId":"t-1","userId":"u-1",
		"phase":"Failed","reason":"Error","message":"the agent exited with code 3 (Error)",
		"output":{"a":"1","b":"2"},"exitCode":3,
		"startTime":"2026-01-02T03:04:05Z","completionTime":"2026-01-02T03:05:05Z"}`, string(body))
	again, err := BuildPayload(task)
	require.NoError(t, err)
	assert.Equal(t, body, again, "every attempt sends the same bytes")
	var decoded map[string]any
	require.NoError(t, json.Unmarshal(body, &decoded))
	assert.NotContains(t, decoded, "webhook", "delivery state is not part of the body")
	assert.Equal(t, "uid-1/completion", IdempotencyKey(task))
}

// TestTrimInterns: cached objects share the strings they all repeat.
func TestTrimInterns(t *testing.T) {
	decode := func() *v1alpha1.AgentTask {
		task := fullTask()
		task.Status = ComputeStatus(task, Observation{Job: job(), Pod: pod(corev1.PodRunning, running()), Now: now})
		data, err := json.Marshal(task)
		require.NoError(t, err)
		out := &v1alpha1.AgentTask{}
		require.NoError(t, json.Unmarshal(data, out)) // fresh strings, as from the watch
		trimmed, err := trimTask(out)
		require.NoError(t, err)
		return trimmed.(*v1alpha1.AgentTask)
	}
	a := decode()
	runtime.GC() // the canonical copies outlive a collection
	b := decode()
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	assert.True(t, same(a.Namespace, b.Namespace), "namespace")
	assert.True(t, same(string(a.Status.Phase), string(b.Status.Phase)), "phase")
	require.NotEmpty(t, a.Status.Conditions)
	for i, c := range a.Status.Conditions {
		assert.True(t, same(c.Type, b.Status.Conditions[i].Type), "condition type")
		assert.True(t, same(c.Reason, b.Status.Conditions[i].Reason), "condition reason")
	}
	ready := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady)
	require.NotNil(t, ready)
	assert.True(t, same(ready.Message, a.Status.Message), "a condition shares the status message it repeats")

	record := func() *jobRecord {
		data, err := json.Marshal(BuildJob(fullTask(), DefaultConfig(), nil))
		require.NoError(t, err)
		job := &batchv1.Job{}
		require.NoError(t, json.Unmarshal(data, job))
		rec, err := recordJob(job)
		require.NoError(t, err)
		return rec.(*jobRecord)
	}
	r1 := record()
	runtime.GC()
	r2 := record()
	assert.True(t, same(r1.OwnerReferences[0].APIVersion, r2.OwnerReferences[0].APIVersion), "owner apiVersion")
	assert.True(t, same(r1.OwnerReferences[0].Name, r1.Name), "a Job's owner is named as the Job")
}
