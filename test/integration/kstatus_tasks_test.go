package integration

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tasks"
	"opsnorth.io/scheduler/pkg/testkit"
)

// taskCases drive an AgentTask through its Job and pod, the test playing
// the Job controller and the kubelet (kstatus_jobs_test.go).
var taskCases = []phaseCase{
	{kind: kindAgentTask, phase: "Pending", kstatus: status.InProgressStatus, met: []string{reconciling},
		drive: func(t *testing.T, s *stage) objRef {
			ref := s.createTask(t, "pending")
			s.job(t, ref)
			return s.waitPhase(t, ref, string(v1alpha1.TaskPending), nil)
		}},
	{kind: kindAgentTask, phase: "Running", kstatus: status.InProgressStatus, met: []string{reconciling},
		drive: func(t *testing.T, s *stage) objRef {
			ref := s.createTask(t, "running")
			s.runPod(t, s.job(t, ref))
			return s.waitPhase(t, ref, string(v1alpha1.TaskRunning), nil)
		}},
	{kind: kindAgentTask, phase: "Succeeded", kstatus: status.CurrentStatus, met: []string{ready, complete},
		drive: func(t *testing.T, s *stage) objRef {
			ref := s.createTask(t, "succeeded")
			pod := s.runPod(t, s.job(t, ref))
			s.waitPhase(t, ref, string(v1alpha1.TaskRunning), nil)
			s.terminatePod(t, pod, 0)
			return s.waitPhase(t, ref, string(v1alpha1.TaskSucceeded), nil)
		}},
	{kind: kindAgentTask, phase: "Failed (exit code)", kstatus: status.FailedStatus, met: []string{stalled, failed},
		drive: func(t *testing.T, s *stage) objRef {
			ref := s.createTask(t, "exit3")
			job := s.job(t, ref)
			pod := s.runPod(t, job)
			s.waitPhase(t, ref, string(v1alpha1.TaskRunning), nil)
			s.terminatePod(t, pod, 3)
			s.failJob(t, job, batchv1.JobReasonBackoffLimitExceeded)
			return s.waitPhase(t, ref, string(v1alpha1.TaskFailed), nil)
		}},
	{kind: kindAgentTask, phase: "Failed (cancelled)", kstatus: status.FailedStatus, met: []string{stalled, failed},
		drive: func(t *testing.T, s *stage) objRef {
			ref := s.createTask(t, "cancelled")
			s.runPod(t, s.job(t, ref))
			s.waitPhase(t, ref, string(v1alpha1.TaskRunning), nil)
			// A spec change: the conditions must follow generation 2.
			s.patch(t, ref, `{"spec":{"cancel":true}}`)
			return s.waitPhase(t, ref, string(v1alpha1.TaskFailed), reasonIs(tasks.ReasonCancelled))
		}},
	{kind: kindAgentTask, phase: "Timeout", kstatus: status.FailedStatus, met: []string{stalled, failed},
		drive: func(t *testing.T, s *stage) objRef {
			ref := s.createTask(t, "timeout")
			job := s.job(t, ref)
			pod := s.runPod(t, job)
			s.waitPhase(t, ref, string(v1alpha1.TaskRunning), nil)
			// The Job controller marks the deadline, then deletes the pod.
			s.failJob(t, job, batchv1.JobReasonDeadlineExceeded)
			s.deletePod(t, pod)
			return s.waitPhase(t, ref, string(v1alpha1.TaskTimeout), nil)
		}},
}

// createTask creates a task with a 10-minute timeout in the tasks namespace.
func (s *stage) createTask(t *testing.T, prefix string) objRef {
	t.Helper()
	task := testkit.MakeAgentTask(uniqueName(prefix), s.tasks).Timeout(600).Obj()
	s.create(t, task)
	return objRef{kind: kindAgentTask, namespace: task.Namespace, name: task.Name}
}
