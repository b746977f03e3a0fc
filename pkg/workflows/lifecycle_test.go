package workflows_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
	"opsnorth.io/scheduler/pkg/testenv"
	"opsnorth.io/scheduler/pkg/workflows"
)

func TestRestartMidWorkflow(t *testing.T) {
	k := newCluster(t)
	first := startManager(t, k.ns)
	k.create(stepWorkflow("restart",
		step("one", nil),
		step("two", map[string]string{"A": "${steps.one.output.a}"}),
		step("three", map[string]string{"B": "${steps.1.output.b}", "A": "${steps.0.output.a}"}),
	))
	k.finish(k.waitTask("restart", "one", 0), v1alpha1.TaskSucceeded, map[string]string{"a": "1"})
	two := k.waitTask("restart", "two", 0)
	require.Eventually(t, func() bool {
		s := k.workflow("restart").Status.StepStatuses
		return len(s) == 3 && s[1].Phase == v1alpha1.StepRunning
	}, wait, 20*time.Millisecond)
	first.Stop(t)

	// While no manager runs, the step finishes.
	k.finish(two, v1alpha1.TaskSucceeded, map[string]string{"b": "2"})
	time.Sleep(500 * time.Millisecond)
	assert.True(t, k.gone("restart", "three", 0), "no manager runs, nothing may start")

	startManager(t, k.ns)
	three := k.waitTask("restart", "three", 0)
	assert.Equal(t, v1alpha1.TaskInput{"A": "1", "B": "2"}, three.Spec.Input)
	k.finish(three, v1alpha1.TaskSucceeded, nil)
	done := k.waitWorkflow("restart", v1alpha1.WorkflowSucceeded)
	for _, s := range done.Status.StepStatuses {
		assert.Equal(t, int32(1), s.Attempts, s.Name)
	}
	assert.Equal(t, names("restart", "one 0", "two 0", "three 0"), k.taskNames("restart"), "no task was duplicated")
}

// TestRestartEveryStep restarts the manager at every step of a workflow,
// with the step's task both finished before and after the restart.
func TestRestartEveryStep(t *testing.T) {
	k := newCluster(t)
	k.create(stepWorkflow("churn", step("s0", nil), step("s1", nil), step("s2", nil), step("s3", nil)))
	for i, s := range []string{"s0", "s1", "s2", "s3"} {
		m := startManager(t, k.ns)
		task := k.waitTask("churn", s, 0)
		if i%2 == 0 {
			k.finish(task, v1alpha1.TaskSucceeded, nil)
			m.Stop(t)
			continue
		}
		m.Stop(t)
		k.finish(task, v1alpha1.TaskSucceeded, nil)
	}
	startManager(t, k.ns)
	k.waitWorkflow("churn", v1alpha1.WorkflowSucceeded)
	assert.Equal(t, names("churn", "s0 0", "s1 0", "s2 0", "s3 0"), k.taskNames("churn"))
}

// TestDeleteRemovesTasks: every step task is controlled by its Workflow with
// blockOwnerDeletion, so the garbage collector deletes the tasks (and their
// Jobs) with the Workflow. The test control plane runs no controllers, so a
// real kube-controller-manager with only the garbage collector is started
// when its binary is in the control-plane cache (`make controlplane`).
func TestDeleteRemovesTasks(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns)
	wf := k.create(stepWorkflow("gone", step("a", nil), step("b", nil, "a"), step("c", nil, "a")))
	k.finish(k.waitTask("gone", "a", 0), v1alpha1.TaskSucceeded, nil)
	k.waitTask("gone", "b", 0)
	k.waitTask("gone", "c", 0)
	list, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 3)
	for _, task := range list.Items {
		ref := metav1.GetControllerOf(&task)
		require.NotNil(t, ref, task.Name)
		assert.Equal(t, wf.UID, ref.UID, task.Name)
		assert.Equal(t, "Workflow", ref.Kind, task.Name)
		assert.True(t, *ref.BlockOwnerDeletion, task.Name)
	}

	startGarbageCollector(t)
	require.NoError(t, k.cs.SchedulerV1alpha1().Workflows(k.ns).Delete(context.Background(), "gone", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		list, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).List(context.Background(), metav1.ListOptions{})
		return err == nil && len(list.Items) == 0
	}, 2*wait, 100*time.Millisecond, "the garbage collector never deleted the workflow's tasks")
}

// startGarbageCollector runs kube-controller-manager with only the garbage
// collector against the test control plane, or skips the test when the
// binary was not built.
func startGarbageCollector(t *testing.T) {
	t.Helper()
	env := testenv.Require(t)
	bin, err := testenv.BinaryDir(env.RepoRoot)
	require.NoError(t, err)
	kcm := filepath.Join(bin, "kube-controller-manager")
	if _, err := os.Stat(kcm); err != nil {
		t.Skipf("owner references checked; deletion needs %s (make controlplane)", kcm)
	}
	kubeconfig, err := env.KubeconfigFor(t.TempDir(), "garbage-collector", "system:masters")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, kcm, "--kubeconfig="+kubeconfig, "--controllers=garbagecollector",
		"--leader-elect=false", "--secure-port=0", "--use-service-account-credentials=false")
	logPath := filepath.Join(t.TempDir(), "kube-controller-manager.log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		_ = logFile.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			t.Logf("kube-controller-manager log:\n%s", out)
		}
	})
}

// TestForeignTaskNameConflict: a task with a step's deterministic name that
// the workflow does not own (here a leftover of a deleted workflow of the
// same name, not yet garbage collected) is never adopted; the workflow
// reports Stalled until it is gone, then runs the step with a task of its own.
func TestForeignTaskNameConflict(t *testing.T) {
	k := newCluster(t)
	name := workflows.TaskName("clash", "a", 0)
	_, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Create(context.Background(), &v1alpha1.AgentTask{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{labelkeys.Workflow: "clash", labelkeys.Step: "a"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "Workflow", Name: "clash", UID: "old-uid", Controller: new(true),
			}}},
		Spec: v1alpha1.AgentTaskSpec{TaskID: "foreign", UserID: "someone", Image: "other:1"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	startManager(t, k.ns)
	wf := k.create(stepWorkflow("clash", step("a", nil)))
	require.Eventually(t, func() bool {
		stalled := meta.FindStatusCondition(k.workflow("clash").Status.Conditions, v1alpha1.ConditionStalled)
		return stalled != nil && stalled.Reason == workflows.ReasonTaskNameConflict
	}, wait, 20*time.Millisecond)
	assert.Equal(t, "AgentTask "+name+" exists and is not owned by this workflow; delete it to continue", k.workflow("clash").Status.Message)
	foreign, err := k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "old-uid", string(metav1.GetControllerOf(foreign).UID), "the foreign task is left alone")

	require.NoError(t, k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Delete(context.Background(), name, metav1.DeleteOptions{}))
	var own *v1alpha1.AgentTask
	require.Eventually(t, func() bool {
		own, err = k.cs.SchedulerV1alpha1().AgentTasks(k.ns).Get(context.Background(), name, metav1.GetOptions{})
		return err == nil && metav1.IsControlledBy(own, wf)
	}, wait, 20*time.Millisecond, "the step starts once the name is free")
	k.finish(own, v1alpha1.TaskSucceeded, nil)
	done := k.waitWorkflow("clash", v1alpha1.WorkflowSucceeded)
	assert.Nil(t, meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionStalled))
}

// TestAllNamespaces: with an empty --watch-namespace the manager watches
// Workflows and their AgentTasks in every namespace.
func TestAllNamespaces(t *testing.T) {
	k := newCluster(t)
	startManager(t, "") // all namespaces, its Role's rules granted cluster-wide
	k.create(stepWorkflow("anywhere", step("a", nil), step("b", map[string]string{"X": "${steps.a.output.x}"})))
	k.finish(k.waitTask("anywhere", "a", 0), v1alpha1.TaskSucceeded, map[string]string{"x": "1"})
	b := k.waitTask("anywhere", "b", 0)
	assert.Equal(t, v1alpha1.TaskInput{"X": "1"}, b.Spec.Input)
	k.finish(b, v1alpha1.TaskSucceeded, nil)
	k.waitWorkflow("anywhere", v1alpha1.WorkflowSucceeded)
}
