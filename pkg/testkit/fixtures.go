package testkit

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// Fixture builders in the manner of kueue's wrappers:
// MakeAgentTask("x", ns).Image("...").Input("K", "v").Obj(). Each Make
// starts from a valid object; each setter returns the wrapper.

// AgentTaskWrapper builds an AgentTask.
type AgentTaskWrapper struct{ v1alpha1.AgentTask }

// MakeAgentTask returns a valid AgentTask: task id "id-<name>", user
// "user-1", image ghcr.io/acme/agent:1.2.
func MakeAgentTask(name, namespace string) *AgentTaskWrapper {
	return &AgentTaskWrapper{v1alpha1.AgentTask{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       v1alpha1.AgentTaskSpec{TaskID: "id-" + name, UserID: "user-1", Image: "ghcr.io/acme/agent:1.2"},
	}}
}

// Obj returns a copy of the built AgentTask.
func (w *AgentTaskWrapper) Obj() *v1alpha1.AgentTask { return w.DeepCopy() }

// User sets spec.userId.
func (w *AgentTaskWrapper) User(id string) *AgentTaskWrapper { w.Spec.UserID = id; return w }

// Image sets spec.image.
func (w *AgentTaskWrapper) Image(image string) *AgentTaskWrapper { w.Spec.Image = image; return w }

// Input sets one key of spec.input.
func (w *AgentTaskWrapper) Input(key, value string) *AgentTaskWrapper {
	if w.Spec.Input == nil {
		w.Spec.Input = map[string]string{}
	}
	w.Spec.Input[key] = value
	return w
}

// Timeout sets spec.timeoutSeconds.
func (w *AgentTaskWrapper) Timeout(seconds int64) *AgentTaskWrapper {
	w.Spec.TimeoutSeconds = &seconds
	return w
}

// Webhook sets spec.webhookUrl.
func (w *AgentTaskWrapper) Webhook(url string) *AgentTaskWrapper { w.Spec.WebhookURL = url; return w }

// WebhookSecret sets spec.webhookSecretRef.
func (w *AgentTaskWrapper) WebhookSecret(name, key string) *AgentTaskWrapper {
	w.Spec.WebhookSecretRef = &v1alpha1.SecretKeyReference{Name: name, Key: key}
	return w
}

// Label sets one label.
func (w *AgentTaskWrapper) Label(key, value string) *AgentTaskWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[key] = value
	return w
}

// WorkflowWrapper builds a Workflow.
type WorkflowWrapper struct{ v1alpha1.Workflow }

// MakeWorkflow returns a Workflow of user "u1" without steps; add them
// with Step.
func MakeWorkflow(name, namespace string) *WorkflowWrapper {
	return &WorkflowWrapper{v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       v1alpha1.WorkflowSpec{UserID: "u1"},
	}}
}

// Obj returns a copy of the built Workflow.
func (w *WorkflowWrapper) Obj() *v1alpha1.Workflow { return w.DeepCopy() }

// User sets spec.userId.
func (w *WorkflowWrapper) User(id string) *WorkflowWrapper { w.Spec.UserID = id; return w }

// Step appends steps.
func (w *WorkflowWrapper) Step(steps ...*StepWrapper) *WorkflowWrapper {
	for _, s := range steps {
		w.Spec.Steps = append(w.Spec.Steps, s.Obj())
	}
	return w
}

// Webhook sets spec.webhookUrl.
func (w *WorkflowWrapper) Webhook(url string) *WorkflowWrapper { w.Spec.WebhookURL = url; return w }

// StepWrapper builds a Workflow step.
type StepWrapper struct{ v1alpha1.WorkflowStep }

// MakeStep returns a step running ghcr.io/acme/agent:1.
func MakeStep(name string) *StepWrapper {
	return &StepWrapper{v1alpha1.WorkflowStep{Name: name, Image: "ghcr.io/acme/agent:1"}}
}

// Obj returns a copy of the built step.
func (s *StepWrapper) Obj() v1alpha1.WorkflowStep { return *s.DeepCopy() }

// Image sets the step's image.
func (s *StepWrapper) Image(image string) *StepWrapper { s.WorkflowStep.Image = image; return s }

// Input sets one key of the step's input.
func (s *StepWrapper) Input(key, value string) *StepWrapper {
	if s.WorkflowStep.Input == nil {
		s.WorkflowStep.Input = map[string]string{}
	}
	s.WorkflowStep.Input[key] = value
	return s
}

// Inputs sets the step's whole input.
func (s *StepWrapper) Inputs(input map[string]string) *StepWrapper {
	s.WorkflowStep.Input = input
	return s
}

// DependsOn sets the steps this one waits for.
func (s *StepWrapper) DependsOn(steps ...string) *StepWrapper {
	s.WorkflowStep.DependsOn = steps
	return s
}

// Retries sets the step's retry limit.
func (s *StepWrapper) Retries(limit int32) *StepWrapper {
	s.WorkflowStep.Retries = &v1alpha1.RetryPolicy{Limit: limit}
	return s
}

// MakeApprovalStep returns an approval step that shows message to approvers.
func MakeApprovalStep(name, message string) *StepWrapper {
	return &StepWrapper{v1alpha1.WorkflowStep{Name: name, Approval: &v1alpha1.ApprovalGate{Message: message}}}
}

// ApprovalTimeout bounds an approval step's wait; action is what it does then.
func (s *StepWrapper) ApprovalTimeout(seconds int64, action v1alpha1.ApprovalTimeoutAction) *StepWrapper {
	s.Approval.TimeoutSeconds, s.Approval.OnTimeout = &seconds, action
	return s
}

// UserDeploymentWrapper builds a UserDeployment.
type UserDeploymentWrapper struct{ v1alpha1.UserDeployment }

// MakeUserDeployment returns a UserDeployment of user, without a template
// or an image: set one.
func MakeUserDeployment(name, namespace, user string) *UserDeploymentWrapper {
	return &UserDeploymentWrapper{v1alpha1.UserDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       v1alpha1.UserDeploymentSpec{UserID: user},
	}}
}

// Obj returns a copy of the built UserDeployment.
func (w *UserDeploymentWrapper) Obj() *v1alpha1.UserDeployment { return w.DeepCopy() }

// Template sets spec.template.
func (w *UserDeploymentWrapper) Template(name string) *UserDeploymentWrapper {
	w.Spec.Template = name
	return w
}

// Image sets spec.image, a raw-image app.
func (w *UserDeploymentWrapper) Image(image string) *UserDeploymentWrapper {
	w.Spec.Image = image
	return w
}

// Tier sets spec.tier.
func (w *UserDeploymentWrapper) Tier(tier string) *UserDeploymentWrapper {
	w.Spec.Tier = tier
	return w
}
