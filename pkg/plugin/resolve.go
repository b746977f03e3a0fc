package plugin

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// agentContainerName is the agent's container in a task's pod (the tasks
// manager's tasks.ContainerName, not imported to keep the plugin free of
// the managers' dependencies).
const agentContainerName = "agent"

// stepTask resolves a workflow step to the AgentTask of its attempt
// (1-based; 0 for the latest) and says which attempt of how many it is.
func stepTask(ctx context.Context, c *clients, wfName, stepName string, attempt int32) (string, string, error) {
	obj, err := fetch(ctx, c, workflowResource, wfName)
	if err != nil {
		return "", "", err
	}
	wf := obj.(*v1alpha1.Workflow)
	step, st, err := findStep(wf, stepName)
	if err != nil {
		return "", "", err
	}
	if step.Approval != nil {
		return "", "", fmt.Errorf("step %s is an approval step: approval steps have no logs", stepName)
	}
	if st == nil || st.Attempts == 0 || st.TaskName == "" {
		return "", "", fmt.Errorf("step %s has not started (phase %s)", stepName, phaseOr(st))
	}
	if attempt == 0 || attempt == st.Attempts {
		return st.TaskName, fmt.Sprintf("attempt %d of %d", st.Attempts, st.Attempts), nil
	}
	if attempt < 0 || attempt > st.Attempts {
		return "", "", fmt.Errorf("step %s has %d attempt(s): --attempt must be 1 to %d", stepName, st.Attempts, st.Attempts)
	}
	// Every attempt's AgentTask carries the workflow and step labels and
	// ends in "-<attempt>", counted from 0.
	sel := labels.SelectorFromSet(labels.Set{labelkeys.Workflow: wf.Name, labelkeys.Step: stepName})
	list, err := c.scheduler().AgentTasks(wf.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return "", "", fmt.Errorf("list agenttasks of step %s: %w", stepName, err)
	}
	suffix := "-" + strconv.Itoa(int(attempt-1))
	for _, t := range list.Items {
		if ref := metav1.GetControllerOf(&t); ref != nil && ref.UID == wf.UID && strings.HasSuffix(t.Name, suffix) {
			return t.Name, fmt.Sprintf("attempt %d of %d", attempt, st.Attempts), nil
		}
	}
	return "", "", fmt.Errorf("attempt %d of step %s: its agenttask is gone (deleted, or collected with its workflow's earlier run)", attempt, stepName)
}

// findStep returns the step named name and its status (nil before the
// workflows manager wrote one).
func findStep(wf *v1alpha1.Workflow, name string) (*v1alpha1.WorkflowStep, *v1alpha1.StepStatus, error) {
	names := make([]string, 0, len(wf.Spec.Steps))
	for i := range wf.Spec.Steps {
		if wf.Spec.Steps[i].Name != name {
			names = append(names, wf.Spec.Steps[i].Name)
			continue
		}
		for j := range wf.Status.StepStatuses {
			if wf.Status.StepStatuses[j].Name == name {
				return &wf.Spec.Steps[i], &wf.Status.StepStatuses[j], nil
			}
		}
		return &wf.Spec.Steps[i], nil, nil
	}
	return nil, nil, fmt.Errorf("workflow %s has no step %q (its steps: %s)", wf.Name, name, strings.Join(names, ", "))
}

func phaseOr(st *v1alpha1.StepStatus) v1alpha1.StepPhase {
	if st == nil || st.Phase == "" {
		return v1alpha1.StepPending
	}
	return st.Phase
}

// taskPod finds the newest pod of task's Job; what names the task in errors.
func taskPod(ctx context.Context, c *clients, task *v1alpha1.AgentTask, what string) (*corev1.Pod, error) {
	jobName := task.Status.JobName
	if jobName == "" {
		jobName = task.Name // the tasks manager names the Job after its task
	}
	job, err := c.kube.BatchV1().Jobs(task.Namespace).Get(ctx, jobName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if task.Status.Phase.IsTerminal() {
			return nil, fmt.Errorf("%s ended %s and its Job %s is gone with its pod (ttlSecondsAfterFinished): no logs left",
				what, task.Status.Phase, jobName)
		}
		return nil, fmt.Errorf("%s has not started: its Job %s does not exist yet%s", what, jobName, waitingFor(task))
	}
	if err != nil {
		return nil, fmt.Errorf("get job %s: %w", jobName, err)
	}
	sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("selector of job %s: %w", jobName, err)
	}
	pods, err := c.kube.CoreV1().Pods(task.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("list pods of job %s: %w", jobName, err)
	}
	if len(pods.Items) == 0 {
		if task.Status.Phase.IsTerminal() {
			return nil, fmt.Errorf("%s ended %s and the pod of its Job %s is gone: no logs left", what, task.Status.Phase, jobName)
		}
		return nil, fmt.Errorf("%s has not started: its Job %s has no pod yet%s", what, jobName, waitingFor(task))
	}
	newest := &pods.Items[0]
	for i := range pods.Items {
		p := &pods.Items[i]
		if newest.CreationTimestamp.Before(&p.CreationTimestamp) ||
			(newest.CreationTimestamp.Equal(&p.CreationTimestamp) && p.Name > newest.Name) {
			newest = p
		}
	}
	return newest, nil
}

// waitingFor is the reason a pending task gives, as a clause.
func waitingFor(task *v1alpha1.AgentTask) string {
	if task.Status.Reason == "" {
		return ""
	}
	text := " (" + task.Status.Reason
	if task.Status.Message != "" {
		text += ": " + task.Status.Message
	}
	return text + ")"
}

// agentContainer picks the container to read, refusing one that has not
// started: the kubelet has no log of it.
func agentContainer(pod *corev1.Pod, what string) (string, error) {
	name := pod.Spec.Containers[0].Name
	for _, c := range pod.Spec.Containers {
		if c.Name == agentContainerName {
			name = c.Name
		}
	}
	var status *corev1.ContainerStatus
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			status = &pod.Status.ContainerStatuses[i]
		}
	}
	switch {
	case pod.Spec.NodeName == "":
		return "", fmt.Errorf("%s has not started: pod %s is not scheduled yet", what, pod.Name)
	case status == nil:
		return "", fmt.Errorf("%s has not started: pod %s is %s, its container %s not yet", what, pod.Name, pod.Status.Phase, name)
	case status.State.Waiting != nil && status.LastTerminationState.Terminated == nil:
		reason := status.State.Waiting.Reason
		if m := status.State.Waiting.Message; m != "" {
			reason += ": " + m
		}
		return "", fmt.Errorf("%s has not started: container %s of pod %s is waiting (%s)", what, name, pod.Name, reason)
	}
	return name, nil
}
