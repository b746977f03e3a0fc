package workflows

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/labelkeys"
)

// componentValue is the app.kubernetes.io/component of step tasks.
const componentValue = "workflow-step"

// taskLabels are the labels of every AgentTask a workflow owns; the manager's
// AgentTask informer selects on the workflow label.
func taskLabels(wf *v1alpha1.Workflow, step string) map[string]string {
	return map[string]string{
		labelkeys.ManagedBy: labelkeys.ManagedByValue,
		labelkeys.PartOf:    labelkeys.PartOfValue,
		labelkeys.Component: componentValue,
		labelkeys.Workflow:  labelValue(wf.Name),
		labelkeys.Step:      step,
	}
}

// buildTask returns the AgentTask of attempt of step i, with input already
// substituted. The workflow is its controller, so deleting the workflow
// deletes its tasks (and their Jobs) through garbage collection.
func buildTask(wf *v1alpha1.Workflow, i int, attempt int32, input map[string]string) *v1alpha1.AgentTask {
	step := wf.Spec.Steps[i]
	name := TaskName(wf.Name, step.Name, attempt)
	return &v1alpha1.AgentTask{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       wf.Namespace,
			Labels:          taskLabels(wf, step.Name),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(wf, v1alpha1.SchemeGroupVersion.WithKind("Workflow"))},
		},
		Spec: v1alpha1.AgentTaskSpec{
			TaskID:              name,
			UserID:              wf.Spec.UserID,
			Image:               step.Image,
			Command:             step.Command,
			Args:                step.Args,
			Input:               input,
			TimeoutSeconds:      step.TimeoutSeconds,
			StartTimeoutSeconds: step.StartTimeoutSeconds,
			Resources:           step.Resources,
			ServiceAccountName:  step.ServiceAccountName,
			AgentPod:            *step.AgentPod.DeepCopy(),
		},
	}
}

// isStepOf reports whether wf is the controller of task, so task is one of its steps.
func isStepOf(task *v1alpha1.AgentTask, wf *v1alpha1.Workflow) bool {
	ref := metav1.GetControllerOf(task)
	return ref != nil && ref.UID == wf.UID
}
