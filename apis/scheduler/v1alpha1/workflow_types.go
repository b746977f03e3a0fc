package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkflowPhase is where a Workflow is in its life. Succeeded and Failed are
// terminal, though a Failed workflow can be retried (spec.retry).
// +kubebuilder:validation:Enum=Pending;Running;Suspended;Succeeded;Failed
type WorkflowPhase string

// Workflow phases.
const (
	WorkflowPending WorkflowPhase = "Pending"
	WorkflowRunning WorkflowPhase = "Running"
	// WorkflowSuspended: spec.suspend is set; no step starts until it is cleared.
	WorkflowSuspended WorkflowPhase = "Suspended"
	WorkflowSucceeded WorkflowPhase = "Succeeded"
	WorkflowFailed    WorkflowPhase = "Failed"
)

// IsTerminal reports whether the phase can no longer change.
func (p WorkflowPhase) IsTerminal() bool {
	return p == WorkflowSucceeded || p == WorkflowFailed
}

// StepPhase is where one step of a Workflow is.
// +kubebuilder:validation:Enum=Pending;Running;Waiting;Retrying;Succeeded;Failed;Skipped
type StepPhase string

// Step phases. Waiting is an approval step waiting for a decision. Skipped
// marks steps that never started because the workflow failed or timed out
// first, and approval steps whose timeout skips them.
const (
	StepPending   StepPhase = "Pending"
	StepRunning   StepPhase = "Running"
	StepWaiting   StepPhase = "Waiting"
	StepRetrying  StepPhase = "Retrying"
	StepSucceeded StepPhase = "Succeeded"
	StepFailed    StepPhase = "Failed"
	StepSkipped   StepPhase = "Skipped"
)

// WorkflowSpec is an ordered list, or a DAG, of agent and approval steps.
// The spec is immutable apart from its controls: suspend, stop, retry and
// approvals.
// +kubebuilder:validation:XValidation:rule="self.userId == oldSelf.userId && self.steps == oldSelf.steps && has(self.input) == has(oldSelf.input) && (!has(self.input) || self.input == oldSelf.input) && has(self.timeoutSeconds) == has(oldSelf.timeoutSeconds) && (!has(self.timeoutSeconds) || self.timeoutSeconds == oldSelf.timeoutSeconds) && has(self.timeoutCountsSuspension) == has(oldSelf.timeoutCountsSuspension) && (!has(self.timeoutCountsSuspension) || self.timeoutCountsSuspension == oldSelf.timeoutCountsSuspension) && has(self.webhookUrl) == has(oldSelf.webhookUrl) && (!has(self.webhookUrl) || self.webhookUrl == oldSelf.webhookUrl) && has(self.webhookSecretRef) == has(oldSelf.webhookSecretRef) && (!has(self.webhookSecretRef) || self.webhookSecretRef == oldSelf.webhookSecretRef) && has(self.ttlSecondsAfterFinished) == has(oldSelf.ttlSecondsAfterFinished) && (!has(self.ttlSecondsAfterFinished) || self.ttlSecondsAfterFinished == oldSelf.ttlSecondsAfterFinished) && has(self.approvers) == has(oldSelf.approvers) && (!has(self.approvers) || self.approvers == oldSelf.approvers)",message="spec is immutable apart from suspend, stop, retry and approvals: create a new Workflow to run other steps"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.approvals) || (has(self.approvals) && oldSelf.approvals.all(o, self.approvals.exists(a, a == o)))",message="spec.approvals can only be added to: a decision stays as it was made",fieldPath=".approvals"
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || !has(self.approvals)",optionalOldSelf=true,message="spec.approvals cannot be set when the workflow is created: a decision is made on a waiting step",fieldPath=".approvals"
// +kubebuilder:validation:XValidation:rule="!has(self.approvals) || self.approvals.all(a, self.steps.exists(s, s.name == a.step && has(s.approval)))",message="spec.approvals[].step must name an approval step of this workflow",fieldPath=".approvals"
// +kubebuilder:validation:XValidation:rule="self.steps.all(s, !has(s.dependsOn) || s.dependsOn.all(d, self.steps.exists(t, t.name == d)))",message="steps[].dependsOn must name steps of this workflow",fieldPath=".steps"
// +kubebuilder:validation:XValidation:rule="self.steps.all(s, !has(s.dependsOn) || !(s.name in s.dependsOn))",message="a step cannot depend on itself",fieldPath=".steps"
type WorkflowSpec struct {
	// UserID is the user the workflow runs for; every step's AgentTask carries it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([-_.A-Za-z0-9]*[A-Za-z0-9])?$`
	UserID string `json:"userId"`
	// Input holds workflow-level values that steps read as ${inputs.KEY}.
	// +optional
	// +kubebuilder:validation:MaxProperties=128
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z_][A-Za-z0-9_]*$') && size(k) <= 128)",message="input keys must be letters, digits and '_', not starting with a digit, at most 128 characters"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= 32768)",message="each input value must be at most 32768 characters"
	Input map[string]string `json:"input,omitempty"`
	// Steps run as AgentTasks. Without any dependsOn they run one after another
	// in list order; with dependsOn they form a DAG and independent branches run
	// in parallel.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=50
	Steps []WorkflowStep `json:"steps"`
	// TimeoutSeconds bounds the whole workflow; when it passes, running steps
	// are stopped and the workflow fails with reason Timeout.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2592000
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`
	// WebhookURL receives a POST with the workflow's result once it is terminal.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''",message="webhookUrl must be an absolute http or https URL"
	WebhookURL string `json:"webhookUrl,omitempty"`
	// WebhookSecretRef names a Secret key whose value signs the completion
	// webhook the Standard Webhooks way (https://www.standardwebhooks.com):
	// webhook-signature is "v1," and the base64 of HMAC-SHA256 over
	// "<webhook-id>.<webhook-timestamp>.<body>". A value starting with
	// "whsec_" holds the key base64-encoded after that prefix; any other
	// value is the key as is. Without it the webhook is sent unsigned.
	// +optional
	WebhookSecretRef *SecretKeyReference `json:"webhookSecretRef,omitempty"`
	// TTLSecondsAfterFinished is how long the workflow is kept once it
	// finished (and its webhook was delivered or given up), counted from its
	// completionTime: then the workflows manager deletes it, and its step
	// tasks with it. 0 deletes it as soon as it is settled. Defaults to the
	// manager's --default-workflow-ttl-seconds-after-finished (by default
	// the workflow is kept).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=31536000
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
	// TimeoutCountsSuspension makes timeoutSeconds count the time the
	// workflow spends suspended; by default suspended time is not counted.
	// +optional
	TimeoutCountsSuspension bool `json:"timeoutCountsSuspension,omitempty"`

	// Suspend, while true, starts no new step: running steps finish and keep
	// their outputs, and the workflow shows phase Suspended. Clearing it
	// continues where the workflow was.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// Stop, when set on a workflow that has not finished, deletes its running
	// step tasks (their pods stop) and ends it Failed with reason Stopped.
	// Clear it (in the same write) to retry.
	// +optional
	Stop bool `json:"stop,omitempty"`
	// Retry is the number of retries asked for. Raising it by one retries a
	// Failed workflow: succeeded steps keep their outputs and do not run
	// again, failed and skipped steps run again with the same inputs.
	// status.retries counts the retries done.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=20
	Retry int32 `json:"retry,omitempty"`
	// Approvers are who may decide on the workflow's approval steps that
	// name none of their own.
	// +optional
	Approvers *Approvers `json:"approvers,omitempty"`
	// Approvals are the decisions on approval steps, one per step, run and
	// writer. Entries can only be added (kubectl opsnorth approve), never
	// in the create; the first one of a run that satisfies the step's
	// approvers decides it.
	// +optional
	// +listType=map
	// +listMapKey=step
	// +listMapKey=retry
	// +listMapKey=by
	// +kubebuilder:validation:MaxItems=100
	Approvals []Approval `json:"approvals,omitempty"`
}

// WorkflowStep is one agent run of a workflow, or with approval, a wait for
// a person's decision.
// +kubebuilder:validation:XValidation:rule="has(self.image) != has(self.approval)",message="a step sets either image (an agent step) or approval (an approval step)"
// +kubebuilder:validation:XValidation:rule="!has(self.approval) || !(has(self.command) || has(self.args) || has(self.input) || has(self.timeoutSeconds) || has(self.startTimeoutSeconds) || has(self.resources) || has(self.serviceAccountName) || has(self.retries) || has(self.env) || has(self.envFrom) || has(self.queueName))",message="an approval step runs no agent: it takes only name, dependsOn and approval"
// +kubebuilder:validation:XValidation:rule="!has(self.env) || !has(self.input) || self.env.all(e, !(e.name in self.input))",message="env names must not repeat an input key",fieldPath=".env"
type WorkflowStep struct {
	// Name identifies the step: in dependsOn, in ${steps.NAME.output.KEY} and
	// in the name of its AgentTask.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// Image is the agent's container image; an approval step has none.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[^\s]+$`
	Image string `json:"image,omitempty"`
	// Approval makes the step wait for a decision in spec.approvals instead
	// of running an agent. Its output is decision ("approved" or "skipped"),
	// approver, comment and approvedAt.
	// +optional
	Approval *ApprovalGate `json:"approval,omitempty"`
	// Command overrides the image's entrypoint.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=4096
	Command []string `json:"command,omitempty"`
	// Args are the arguments to the entrypoint.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=32768
	Args []string `json:"args,omitempty"`
	// Input becomes the step task's input. Values may reference
	// ${steps.N.output.KEY} (N is a 0-based step index), ${steps.NAME.output.KEY}
	// and ${inputs.KEY}; "$${" writes a literal "${". Keys follow the rules of
	// an AgentTask's input (kubectl explain agenttask.spec.input), and the
	// expanded input must fit its limits, or the workflow fails with reason
	// InputTooLarge naming the step and key.
	// +optional
	Input TaskInput `json:"input,omitempty"`
	// TimeoutSeconds bounds each attempt of the step.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=604800
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`
	// StartTimeoutSeconds bounds how long each attempt may wait for its agent
	// to start (the step task's startTimeoutSeconds).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	StartTimeoutSeconds *int64 `json:"startTimeoutSeconds,omitempty"`
	// Resources are the step container's requests and limits.
	// +optional
	Resources *ResourceRequirements `json:"resources,omitempty"`
	// ServiceAccountName is the ServiceAccount the step's pod runs as.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// Retries sets how often a failed step is tried again.
	// +optional
	Retries *RetryPolicy `json:"retries,omitempty"`
	// DependsOn names the steps that must succeed before this one starts.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=40
	DependsOn []string `json:"dependsOn,omitempty"`
	// AgentPod holds the step pod's placement and secret environment, copied
	// to the step's AgentTask (kubectl explain agenttask.spec).
	AgentPod `json:",inline"`
}

// RetryPolicy retries a failed step with exponential backoff.
// +kubebuilder:validation:XValidation:rule="!has(self.backoffSeconds) || !has(self.maxBackoffSeconds) || self.backoffSeconds <= self.maxBackoffSeconds",message="backoffSeconds must not exceed maxBackoffSeconds"
type RetryPolicy struct {
	// Limit is the number of retries after the first attempt.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	Limit int32 `json:"limit"`
	// BackoffSeconds is the wait before the first retry; each later retry waits twice as long.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	BackoffSeconds *int32 `json:"backoffSeconds,omitempty"`
	// MaxBackoffSeconds caps the wait between retries.
	// +optional
	// +kubebuilder:default=300
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	MaxBackoffSeconds *int32 `json:"maxBackoffSeconds,omitempty"`
}

// StepStatus is the observed state of one step.
type StepStatus struct {
	// Name of the step.
	Name string `json:"name"`
	// Phase of the step.
	// +optional
	Phase StepPhase `json:"phase,omitempty"`
	// TaskName is the AgentTask of the step's latest attempt.
	// +optional
	TaskName string `json:"taskName,omitempty"`
	// Attempts is the number of AgentTasks created for the step so far, over
	// all runs of the workflow.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// FirstAttempt is the attempt the step's current run started at: the
	// attempts before it belong to runs before a retry.
	// +optional
	FirstAttempt int32 `json:"firstAttempt,omitempty"`
	// Approval is the decision an approval step took.
	// +optional
	Approval *ApprovalRecord `json:"approval,omitempty"`
	// StartTime is when the step's first attempt was created.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when the step reached Succeeded or Failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// NextAttemptTime is when a Retrying step's next attempt starts.
	// +optional
	NextAttemptTime *metav1.Time `json:"nextAttemptTime,omitempty"`
	// Output is the step task's output, which later steps read.
	// +optional
	Output map[string]string `json:"output,omitempty"`
	// OutputTruncated is set when the kubelet kept only the last 4096 bytes
	// of the step agent's termination message: a later step that reads this
	// step's output fails with reason OutputTruncated.
	// +optional
	OutputTruncated bool `json:"outputTruncated,omitempty"`
	// Reason is a CamelCase word for why the step failed or is retrying,
	// e.g. StepFailed, or the reason its task could not start.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message explains the step's phase, e.g. why it failed.
	// +optional
	Message string `json:"message,omitempty"`
}

// WorkflowStatus is the observed state of a Workflow.
type WorkflowStatus struct {
	// Phase is Pending, Running, Suspended, Succeeded or Failed.
	// +optional
	Phase WorkflowPhase `json:"phase,omitempty"`
	// CurrentStep is the index of the first step that has not finished; it
	// equals the number of steps once all have.
	// +optional
	CurrentStep int32 `json:"currentStep,omitempty"`
	// Progress is the number of steps done over the number of steps, e.g.
	// "3/5": a step is done once it succeeded, or once its approval timed
	// out with onTimeout Skip. The workflows manager sets it with every
	// status it decides.
	// +optional
	Progress string `json:"progress,omitempty"`
	// StepStatuses holds one entry per step, in spec order.
	// +optional
	// +listType=map
	// +listMapKey=name
	StepStatuses []StepStatus `json:"stepStatuses,omitempty"`
	// StartTime is when the first step was started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when the workflow reached Succeeded or Failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Duration is CompletionTime minus StartTime, e.g. "1m30s".
	// +optional
	Duration string `json:"duration,omitempty"`
	// Message explains the phase in words, e.g. why the workflow failed.
	// +optional
	Message string `json:"message,omitempty"`
	// SuspendTime is when the current suspension began; unset while the
	// workflow is not suspended.
	// +optional
	SuspendTime *metav1.Time `json:"suspendTime,omitempty"`
	// SuspendedSeconds is the time the current run spent suspended before
	// SuspendTime; the timeout does not count it (spec.timeoutCountsSuspension).
	// +optional
	SuspendedSeconds int64 `json:"suspendedSeconds,omitempty"`
	// Retries is the number of retries done (spec.retry asks for them).
	// +optional
	Retries int32 `json:"retries,omitempty"`
	// RetryHistory records each retry: when, and why the run before failed.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	RetryHistory []RetryRecord `json:"retryHistory,omitempty"`
	// Webhook records the delivery of the completion webhook.
	// +optional
	Webhook *WebhookDelivery `json:"webhook,omitempty"`
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Ready (all steps succeeded), Reconciling and Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Workflow runs steps of AgentTasks in order or as a DAG, passing each step's
// output to later steps.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS label (at most 63 lowercase letters, digits and '-'): it prefixes the names of the step tasks"
// +kubebuilder:validation:XValidation:rule="(has(self.spec.retry) ? self.spec.retry : 0) == (has(oldSelf.spec.retry) ? oldSelf.spec.retry : 0) || ((has(self.spec.retry) ? self.spec.retry : 0) == (has(oldSelf.spec.retry) ? oldSelf.spec.retry : 0) + 1 && !(has(self.spec.stop) && self.spec.stop) && has(oldSelf.status) && has(oldSelf.status.phase) && oldSelf.status.phase == 'Failed' && (has(oldSelf.status.retries) ? oldSelf.status.retries : 0) == (has(oldSelf.spec.retry) ? oldSelf.spec.retry : 0))",message="spec.retry: raise it by one, with spec.stop clear, to retry a Failed workflow whose last retry started"
// +kubebuilder:resource:scope=Namespaced,shortName=onwf,categories=opsnorth
// +kubebuilder:selectablefield:JSONPath=`.spec.userId`
// +kubebuilder:selectablefield:JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="User",type=string,JSONPath=`.spec.userId`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Step",type=integer,JSONPath=`.status.currentStep`,priority=1
// +kubebuilder:printcolumn:name="Retries",type=integer,JSONPath=`.status.retries`,priority=1
// +kubebuilder:printcolumn:name="Started",type=date,JSONPath=`.status.startTime`
// +kubebuilder:printcolumn:name="Duration",type=string,JSONPath=`.status.duration`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Workflow struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the steps to run.
	Spec WorkflowSpec `json:"spec"`
	// Status is what happened.
	// +optional
	Status WorkflowStatus `json:"status,omitempty"`
}

// WorkflowList is a list of Workflows.
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type WorkflowList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Workflows.
	Items []Workflow `json:"items"`
}
