package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testkit"
	"opsnorth.io/scheduler/pkg/workflows"
)

// workflowCases drive a one-step Workflow, the test playing the tasks
// manager for its step task (stage.finishStep).
var workflowCases = []phaseCase{
	{kind: kindWorkflow, phase: "Running", kstatus: status.InProgressStatus, met: []string{reconciling},
		drive: func(t *testing.T, s *stage) objRef {
			ref := s.createWorkflow(t, "running", testkit.MakeStep("a"))
			s.stepTask(t, ref, 0)
			return s.waitPhase(t, ref, string(v1alpha1.WorkflowRunning), nil)
		}},
	{kind: kindWorkflow, phase: "Running (waiting for approval)", kstatus: status.InProgressStatus, met: []string{reconciling},
		drive: func(t *testing.T, s *stage) objRef {
			ref := s.createWorkflow(t, "approval", testkit.MakeApprovalStep("gate", "ship it?"))
			return s.waitPhase(t, ref, string(v1alpha1.WorkflowRunning), stepPhaseIs(v1alpha1.StepWaiting))
		}},
	// Paused on purpose: Ready=False without Reconciling or Stalled, which
	// kstatus reads as InProgress.
	{kind: kindWorkflow, phase: "Suspended", kstatus: status.InProgressStatus, met: []string{workflows.ConditionSuspended},
		drive: func(t *testing.T, s *stage) objRef {
			ref := s.createWorkflow(t, "suspended", testkit.MakeStep("a"))
			s.stepTask(t, ref, 0)
			s.patch(t, ref, `{"spec":{"suspend":true}}`)
			return s.waitPhase(t, ref, string(v1alpha1.WorkflowSuspended), nil)
		}},
	{kind: kindWorkflow, phase: "Succeeded", kstatus: status.CurrentStatus, met: []string{ready, complete},
		drive: func(t *testing.T, s *stage) objRef {
			ref := s.createWorkflow(t, "succeeded", testkit.MakeStep("a"))
			s.finishStep(t, ref, 0, v1alpha1.TaskSucceeded)
			return s.waitPhase(t, ref, string(v1alpha1.WorkflowSucceeded), nil)
		}},
	{kind: kindWorkflow, phase: "Failed (step failed)", kstatus: status.FailedStatus, met: []string{stalled, failed},
		drive: func(t *testing.T, s *stage) objRef {
			ref := s.createWorkflow(t, "failed", testkit.MakeStep("a"))
			s.finishStep(t, ref, 0, v1alpha1.TaskFailed)
			return s.waitPhase(t, ref, string(v1alpha1.WorkflowFailed), nil)
		}},
	{kind: kindWorkflow, phase: "Failed (stopped)", kstatus: status.FailedStatus, met: []string{stalled, failed},
		drive: func(t *testing.T, s *stage) objRef {
			ref := s.createWorkflow(t, "stopped", testkit.MakeStep("a"))
			s.stepTask(t, ref, 0)
			s.patch(t, ref, `{"spec":{"stop":true}}`)
			return s.waitPhase(t, ref, string(v1alpha1.WorkflowFailed), reasonIs(workflows.ReasonStopped))
		}},
	// A retry takes Failed and Stalled away again.
	{kind: kindWorkflow, phase: "Running (retried after Failed)", kstatus: status.InProgressStatus, met: []string{reconciling},
		drive: func(t *testing.T, s *stage) objRef {
			ref := s.createWorkflow(t, "retried", testkit.MakeStep("a"))
			s.finishStep(t, ref, 0, v1alpha1.TaskFailed)
			s.waitPhase(t, ref, string(v1alpha1.WorkflowFailed), nil)
			s.patch(t, ref, `{"spec":{"retry":1}}`)
			s.stepTask(t, ref, 1)
			return s.waitPhase(t, ref, string(v1alpha1.WorkflowRunning), nil)
		}},
	// Stalled without Failed: a human must remove the AgentTask in the way.
	{kind: kindWorkflow, phase: "Running (stalled: step task name taken)", kstatus: status.FailedStatus, met: []string{stalled},
		drive: func(t *testing.T, s *stage) objRef {
			name := uniqueName("clash")
			s.create(t, testkit.MakeAgentTask(workflows.TaskName(name, "a", 0), s.workflows).Obj())
			wf := testkit.MakeWorkflow(name, s.workflows).Step(testkit.MakeStep("a")).Obj()
			s.create(t, wf)
			ref := objRef{kind: kindWorkflow, namespace: wf.Namespace, name: wf.Name}
			return s.waitPhase(t, ref, string(v1alpha1.WorkflowRunning), reasonIs(workflows.ReasonTaskNameConflict))
		}},
}

func (s *stage) createWorkflow(t *testing.T, prefix string, steps ...*testkit.StepWrapper) objRef {
	t.Helper()
	wf := testkit.MakeWorkflow(uniqueName(prefix), s.workflows).Step(steps...).Obj()
	s.create(t, wf)
	return objRef{kind: kindWorkflow, namespace: wf.Namespace, name: wf.Name}
}

// stepTask waits for the AgentTask of attempt of the workflow's step "a".
func (s *stage) stepTask(t *testing.T, ref objRef, attempt int32) *v1alpha1.AgentTask {
	t.Helper()
	task := &v1alpha1.AgentTask{}
	key := client.ObjectKey{Namespace: ref.namespace, Name: workflows.TaskName(ref.name, "a", attempt)}
	require.Eventually(t, func() bool { return s.c.Get(context.Background(), key, task) == nil },
		stageWait, 50*time.Millisecond, "step task %s", key.Name)
	return task
}

// finishStep ends the step task of attempt in phase, as the tasks manager would.
func (s *stage) finishStep(t *testing.T, ref objRef, attempt int32, phase v1alpha1.TaskPhase) {
	t.Helper()
	task := s.stepTask(t, ref, attempt)
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := s.c.Get(context.Background(), client.ObjectKeyFromObject(task), task); err != nil {
			return err
		}
		now := metav1.Now()
		task.Status.Phase, task.Status.StartTime, task.Status.CompletionTime = phase, &now, &now
		if phase != v1alpha1.TaskSucceeded {
			task.Status.Reason, task.Status.Message, task.Status.ExitCode = "Error", "agent exited with code 1", new(int32(1))
		}
		return s.c.Status().Update(context.Background(), task)
	}))
}

// stepPhaseIs holds when the workflow's first step is in phase.
func stepPhaseIs(phase v1alpha1.StepPhase) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		steps, _, _ := unstructured.NestedSlice(u.Object, "status", "stepStatuses")
		return len(steps) > 0 && steps[0].(map[string]any)["phase"] == string(phase)
	}
}
