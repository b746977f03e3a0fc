package plugin

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testkit"
)

// createJob creates the Job of task as the tasks manager names it; the API
// server gives it its selector.
func (k *cluster) createJob(task string) *batchv1.Job {
	k.t.Helper()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: task, Namespace: k.ns},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: agentContainerName, Image: "ghcr.io/acme/agent:1"}},
		}}},
	}
	job, err := k.kube.BatchV1().Jobs(k.ns).Create(k.t.Context(), job, metav1.CreateOptions{})
	require.NoError(k.t, err)
	return job
}

// createPod creates a pod of job on node (none: unscheduled) whose agent
// container is in state.
func (k *cluster) createPod(job *batchv1.Job, name, node string, state corev1.ContainerState) {
	k.t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns, Labels: job.Spec.Selector.MatchLabels},
		Spec: corev1.PodSpec{
			NodeName: node, RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: new(false),
			Containers: []corev1.Container{{Name: "sidecar", Image: "busybox"}, {Name: agentContainerName, Image: "ghcr.io/acme/agent:1"}},
		},
	}
	pod, err := k.kube.CoreV1().Pods(k.ns).Create(k.t.Context(), pod, metav1.CreateOptions{})
	require.NoError(k.t, err)
	if node == "" {
		return
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: agentContainerName, Image: "ghcr.io/acme/agent:1", State: state}}
	if state.Waiting != nil {
		pod.Status.Phase = corev1.PodPending
	}
	_, err = k.kube.CoreV1().Pods(k.ns).UpdateStatus(k.t.Context(), pod, metav1.UpdateOptions{})
	require.NoError(k.t, err)
}

var (
	running    = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: *at(100)}}
	terminated = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, StartedAt: *at(10), FinishedAt: *at(40)}}
)

// TestLogs resolves a step (and attempt) to its task, Job, newest pod and
// agent container, and explains each case without logs. No kubelet runs
// under envtest, so the log stream itself is the harness's stand-in.
func TestLogs(t *testing.T) {
	k := newCluster(t, "logs")
	wf := workflow("report", agentStep("gather"), approvalStep("review", "ok?"), agentStep("write"))
	wf.Status = v1alpha1.WorkflowStatus{Phase: v1alpha1.WorkflowRunning, StartTime: at(0), StepStatuses: []v1alpha1.StepStatus{
		{Name: "gather", Phase: v1alpha1.StepSucceeded, Attempts: 2, TaskName: taskName("report", "gather", 1), StartTime: at(0), CompletionTime: at(150)},
		{Name: "review", Phase: v1alpha1.StepWaiting, StartTime: at(150)},
	}}
	wf = k.createWorkflow(wf)

	first := stepTaskOf(wf, "gather", 0)
	first.Status = v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskFailed, JobName: first.Name}
	k.createTask(first)
	k.createPod(k.createJob(first.Name), "report-gather-0-x1", "node-1", terminated)
	k.logs["report-gather-0-x1"] = "fetching sources\nerror: rate limited\n"

	latest := stepTaskOf(wf, "gather", 1)
	latest.Status = v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskRunning, JobName: latest.Name}
	k.createTask(latest)
	job := k.createJob(latest.Name)
	// An older pod (evicted, say) named to sort last: the newest must win by age.
	k.createPod(job, "report-gather-1-zz-old", "node-1", terminated)
	time.Sleep(1100 * time.Millisecond) // creation timestamps have whole seconds
	k.createPod(job, "report-gather-1-aa-new", "node-1", running)
	k.logs["report-gather-1-aa-new"] = "fetching sources\n12 sources found\n"

	queued := testkit.MakeAgentTask("queued", "").Obj()
	queued.Status = v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskPending, Reason: "Queued", Message: "waiting in LocalQueue team-a"}
	k.createTask(queued)

	pulling := testkit.MakeAgentTask("pulling", "").Obj()
	pulling.Status = v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskPending, Reason: "ImagePullBackOff"}
	k.createTask(pulling)
	k.createPod(k.createJob("pulling"), "pulling-p1", "node-1", corev1.ContainerState{
		Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "ghcr.io/acme/agent:1"`}})

	unscheduled := testkit.MakeAgentTask("unscheduled", "").Obj()
	unscheduled.Status = v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskPending, Reason: "Unschedulable"}
	k.createTask(unscheduled)
	k.createPod(k.createJob("unscheduled"), "unscheduled-u1", "", corev1.ContainerState{})

	expired := testkit.MakeAgentTask("expired", "").Obj()
	expired.Status = v1alpha1.AgentTaskStatus{Phase: v1alpha1.TaskSucceeded, JobName: "expired", CompletionTime: at(10)}
	k.createTask(expired)

	runGolden(t, k, []getCase{
		{golden: "logs-step-latest", args: []string{"logs", "workflow", "report", "gather"}},
		{golden: "logs-step-attempt-follow", args: []string{"logs", "wf", "report", "gather", "--attempt=1", "-f"}},
		{golden: "logs-step-attempt-out-of-range", args: []string{"logs", "wf", "report", "gather", "--attempt=3"},
			wantErr: "step gather has 2 attempt(s)"},
		{golden: "logs-approval-step", args: []string{"logs", "wf", "report", "review"}, wantErr: "approval steps have no logs"},
		{golden: "logs-step-not-started", args: []string{"logs", "wf", "report", "write"}, wantErr: "step write has not started"},
		{golden: "logs-no-such-step", args: []string{"logs", "wf", "report", "publish"}, wantErr: `workflow report has no step "publish"`},
		{golden: "logs-task", args: []string{"logs", "task", taskName("report", "gather", 1)}},
		{golden: "logs-task-no-job", args: []string{"logs", "task", "queued"}, wantErr: "agenttask queued has not started"},
		{golden: "logs-task-image-pull", args: []string{"logs", "task", "pulling"}, wantErr: "is waiting (ImagePullBackOff"},
		{golden: "logs-task-unscheduled", args: []string{"logs", "at", "unscheduled"}, wantErr: "is not scheduled yet"},
		{golden: "logs-task-job-gone", args: []string{"logs", "task", "expired"}, wantErr: "no logs left"},
		{golden: "logs-wrong-kind", args: []string{"logs", "ud", "shop"}, wantErr: "use logs workflow NAME STEP"},
		{golden: "logs-task-attempt", args: []string{"logs", "task", "queued", "--attempt=1"}, wantErr: "use logs workflow NAME STEP"},
	})
}
