package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApprovalGate makes a step wait for a person instead of running an agent.
type ApprovalGate struct {
	// Message tells approvers what to check. It may reference
	// ${steps.NAME.output.KEY}, ${steps.N.output.KEY} and ${inputs.KEY} like a
	// step's input; the expanded message is shown in the step's status.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`
	// TimeoutSeconds bounds the wait for a decision, counted from when the
	// step started waiting.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2592000
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`
	// OnTimeout is what the timeout does: Fail fails the step (and the
	// workflow, reason ApprovalTimeout); Skip skips it, and the steps that
	// depend on it run as if it had been approved (its output has only
	// decision=skipped).
	// +optional
	// +kubebuilder:default=Fail
	OnTimeout ApprovalTimeoutAction `json:"onTimeout,omitempty"`
	// Approvers are who may decide on this step; they replace the
	// workflow's spec.approvers for it.
	// +optional
	Approvers *Approvers `json:"approvers,omitempty"`
}

// Approvers names who may decide on an approval step. With neither users
// nor groups, anyone who may update the Workflow decides. The workflow's
// creator (annotation scheduler.opsnorth.io/creator, which the
// opsnorth-scheduler-workflow-creator admission policy records) never
// decides unless AllowSelfApproval is set.
type Approvers struct {
	// Users are the usernames that may decide.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	Users []string `json:"users,omitempty"`
	// Groups are the groups whose members may decide; a decision names the
	// writer's groups in byGroups, which the approvals admission policy
	// checks against the request.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	Groups []string `json:"groups,omitempty"`
	// AllowSelfApproval lets the workflow's creator decide too.
	// +optional
	AllowSelfApproval bool `json:"allowSelfApproval,omitempty"`
}

// ApprovalTimeoutAction is what an approval step does when nobody decided in time.
// +kubebuilder:validation:Enum=Fail;Skip
type ApprovalTimeoutAction string

// Approval timeout actions.
const (
	ApprovalTimeoutFail ApprovalTimeoutAction = "Fail"
	ApprovalTimeoutSkip ApprovalTimeoutAction = "Skip"
)

// ApprovalDecision approves or rejects an approval step.
// +kubebuilder:validation:Enum=Approve;Reject
type ApprovalDecision string

// Approval decisions.
const (
	DecisionApprove ApprovalDecision = "Approve"
	DecisionReject  ApprovalDecision = "Reject"
)

// Approval is one person's decision on an approval step, written to the
// Workflow's spec.approvals (kubectl opsnorth approve does it). The
// opsnorth-scheduler-approvals admission policy refuses an approval whose
// "by" is not the user who writes it, or that the step's approvers do not
// allow.
type Approval struct {
	// Step names the approval step decided on.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	Step string `json:"step"`
	// Retry is the run of the workflow the decision belongs to: the
	// status.retries it was made in. A retry does not reuse the decisions of
	// an earlier run.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=20
	Retry int32 `json:"retry"`
	// Decision is Approve or Reject; Reject fails the step (reason Rejected).
	// +optional
	// +kubebuilder:default=Approve
	Decision ApprovalDecision `json:"decision,omitempty"`
	// By is the username of who decided.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	By string `json:"by"`
	// ByGroups are the groups of the step's approvers the writer is a
	// member of (kubectl opsnorth approve fills them in); the approvals
	// admission policy refuses a group the request does not carry.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	ByGroups []string `json:"byGroups,omitempty"`
	// Comment is passed to later steps as the approval step's output "comment".
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Comment string `json:"comment,omitempty"`
}

// ApprovalRecord is the decision an approval step took, as the workflows
// manager saw it.
type ApprovalRecord struct {
	// Decision is Approve or Reject.
	Decision ApprovalDecision `json:"decision"`
	// By is who decided.
	By string `json:"by"`
	// Comment is what they said.
	// +optional
	Comment string `json:"comment,omitempty"`
	// Time is when the workflows manager first saw the decision.
	Time metav1.Time `json:"time"`
}

// RetryRecord is one retry of a workflow.
type RetryRecord struct {
	// Time is when the retry started.
	Time metav1.Time `json:"time"`
	// Reason is the reason the run before it failed, e.g. StepFailed or Stopped.
	Reason string `json:"reason"`
	// Message is that run's failure message.
	// +optional
	Message string `json:"message,omitempty"`
	// Steps are the steps that run again.
	// +optional
	// +listType=atomic
	Steps []string `json:"steps,omitempty"`
}
