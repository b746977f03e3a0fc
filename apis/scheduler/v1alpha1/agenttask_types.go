package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TaskPhase is where an AgentTask is in its life. Succeeded, Failed and
// Timeout are terminal: once reached, the phase never changes again.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed;Timeout
type TaskPhase string

// Task phases.
const (
	TaskPending   TaskPhase = "Pending"
	TaskRunning   TaskPhase = "Running"
	TaskSucceeded TaskPhase = "Succeeded"
	TaskFailed    TaskPhase = "Failed"
	TaskTimeout   TaskPhase = "Timeout"
)

// IsTerminal reports whether the phase can no longer change.
func (p TaskPhase) IsTerminal() bool {
	return p == TaskSucceeded || p == TaskFailed || p == TaskTimeout
}

// AgentTaskSpec describes one run of an agent. The spec is immutable apart
// from cancel: a task is a single execution, so to run again, create a new
// AgentTask. (The rule lists every field; TestSpecImmutability fails when a
// new field is missing from it.)
// +kubebuilder:validation:XValidation:rule="self.taskId == oldSelf.taskId && self.userId == oldSelf.userId && self.image == oldSelf.image && has(self.command) == has(oldSelf.command) && (!has(self.command) || self.command == oldSelf.command) && has(self.args) == has(oldSelf.args) && (!has(self.args) || self.args == oldSelf.args) && has(self.input) == has(oldSelf.input) && (!has(self.input) || self.input == oldSelf.input) && has(self.timeoutSeconds) == has(oldSelf.timeoutSeconds) && (!has(self.timeoutSeconds) || self.timeoutSeconds == oldSelf.timeoutSeconds) && has(self.startTimeoutSeconds) == has(oldSelf.startTimeoutSeconds) && (!has(self.startTimeoutSeconds) || self.startTimeoutSeconds == oldSelf.startTimeoutSeconds) && has(self.resources) == has(oldSelf.resources) && (!has(self.resources) || self.resources == oldSelf.resources) && has(self.webhookUrl) == has(oldSelf.webhookUrl) && (!has(self.webhookUrl) || self.webhookUrl == oldSelf.webhookUrl) && has(self.webhookSecretRef) == has(oldSelf.webhookSecretRef) && (!has(self.webhookSecretRef) || self.webhookSecretRef == oldSelf.webhookSecretRef) && has(self.serviceAccountName) == has(oldSelf.serviceAccountName) && (!has(self.serviceAccountName) || self.serviceAccountName == oldSelf.serviceAccountName) && has(self.imagePullSecrets) == has(oldSelf.imagePullSecrets) && (!has(self.imagePullSecrets) || self.imagePullSecrets == oldSelf.imagePullSecrets) && has(self.ttlSecondsAfterFinished) == has(oldSelf.ttlSecondsAfterFinished) && (!has(self.ttlSecondsAfterFinished) || self.ttlSecondsAfterFinished == oldSelf.ttlSecondsAfterFinished) && has(self.ttlSecondsAfterSettled) == has(oldSelf.ttlSecondsAfterSettled) && (!has(self.ttlSecondsAfterSettled) || self.ttlSecondsAfterSettled == oldSelf.ttlSecondsAfterSettled) && has(self.env) == has(oldSelf.env) && (!has(self.env) || self.env == oldSelf.env) && has(self.envFrom) == has(oldSelf.envFrom) && (!has(self.envFrom) || self.envFrom == oldSelf.envFrom) && has(self.nodeSelector) == has(oldSelf.nodeSelector) && (!has(self.nodeSelector) || self.nodeSelector == oldSelf.nodeSelector) && has(self.tolerations) == has(oldSelf.tolerations) && (!has(self.tolerations) || self.tolerations == oldSelf.tolerations) && has(self.affinity) == has(oldSelf.affinity) && (!has(self.affinity) || self.affinity == oldSelf.affinity) && has(self.priorityClassName) == has(oldSelf.priorityClassName) && (!has(self.priorityClassName) || self.priorityClassName == oldSelf.priorityClassName) && has(self.runtimeClassName) == has(oldSelf.runtimeClassName) && (!has(self.runtimeClassName) || self.runtimeClassName == oldSelf.runtimeClassName) && has(self.podMetadata) == has(oldSelf.podMetadata) && (!has(self.podMetadata) || self.podMetadata == oldSelf.podMetadata) && has(self.queueName) == has(oldSelf.queueName) && (!has(self.queueName) || self.queueName == oldSelf.queueName)",message="spec is immutable apart from cancel: create a new AgentTask to run again"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.cancel) || !oldSelf.cancel || (has(self.cancel) && self.cancel)",message="spec.cancel cannot be unset: a cancelled task stays cancelled",fieldPath=".cancel"
// +kubebuilder:validation:XValidation:rule="!has(self.env) || !has(self.input) || self.env.all(e, !(e.name in self.input))",message="spec.env names must not repeat an input key",fieldPath=".env"
type AgentTaskSpec struct {
	// TaskID is the caller's identifier of this run, copied to the Job's
	// task_id label and to the completion webhook.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([-_.A-Za-z0-9]*[A-Za-z0-9])?$`
	TaskID string `json:"taskId"`
	// UserID is the user the task runs for, copied to the Job's user_id label.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([-_.A-Za-z0-9]*[A-Za-z0-9])?$`
	UserID string `json:"userId"`
	// Image is the agent's container image, e.g. ghcr.io/acme/agent:1.2.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[^\s]+$`
	Image string `json:"image"`
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
	// Input is passed to the agent as environment variables, one per key,
	// verbatim: "$(NAME)" in a value is not expanded. Keys are
	// environment variable names (letters, digits and '_'); names that
	// change how the agent's process loads code, resolves names, trusts
	// certificates, routes traffic or which devices it sees are refused, in
	// any letter case: loaders (LD_*, DYLD_*, MALLOC_*, BASH_FUNC_*,
	// GLIBC_TUNABLES, PATH, ...), shell hooks (BASH_ENV, ENV, PS4, IFS, ...),
	// runtime hooks (DOTNET_*, CORECLR_*, GIT_*, PYTHONPATH, NODE_OPTIONS,
	// JAVA_OPTS, JAVA_TOOL_OPTIONS, CLASSPATH, GODEBUG, ...), the resolver's
	// (HOSTALIASES, RES_OPTIONS, ...), proxies (HTTP_PROXY, ALL_PROXY, ...),
	// TLS trust (OPENSSL_*, SSL_CERT_FILE, REQUESTS_CA_BUNDLE, ...), key logs
	// (SSLKEYLOGFILE), endpoint overrides (AWS_ENDPOINT_URL*, OTEL_EXPORTER_*,
	// OPENAI_BASE_URL, PIP_INDEX_URL, KUBECONFIG, ...), GPU visibility
	// (NVIDIA_*, CUDA_VISIBLE_DEVICES, ...) and KUBERNETES_*. The README's
	// "Refused environment names" lists every one.
	// In all, keys and values hold at most 262144 bytes, each value at most 32768.
	// +optional
	Input TaskInput `json:"input,omitempty"`
	// TimeoutSeconds bounds the run: the Job's activeDeadlineSeconds. A task
	// that runs longer ends in phase Timeout. Unset means no limit.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=604800
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`
	// StartTimeoutSeconds bounds how long the task may wait for its agent to
	// start running, counted from the task's creation: a pod that cannot be
	// created, scheduled or pulled by then fails the task with the last
	// cause as its reason. Defaults to the manager's --default-start-timeout
	// (10 minutes).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	StartTimeoutSeconds *int64 `json:"startTimeoutSeconds,omitempty"`
	// Resources are the agent container's requests and limits.
	// +optional
	Resources *ResourceRequirements `json:"resources,omitempty"`
	// WebhookURL receives a POST with the task's result once it is terminal.
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
	// ServiceAccountName is the ServiceAccount the agent's pod runs as.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// ImagePullSecrets are names of Secrets in the task's namespace used to pull the image.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ImagePullSecrets []string `json:"imagePullSecrets,omitempty"`
	// TTLSecondsAfterFinished is how long the finished Job and its pod are kept
	// before they are garbage collected. The AgentTask itself stays. Defaults to
	// the manager's setting (3600).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2592000
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
	// TTLSecondsAfterSettled is how long the task is kept once it is settled
	// (ended, and its webhook delivered or given up), counted from its
	// completionTime: then the tasks manager deletes it, and its Job and pod
	// with it. 0 deletes it as soon as it is settled. Defaults to the
	// manager's --default-task-ttl-seconds-after-settled (by default the task
	// is kept). A Workflow's step tasks go with their Workflow instead.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=31536000
	TTLSecondsAfterSettled *int32 `json:"ttlSecondsAfterSettled,omitempty"`
	// AgentPod holds the pod's placement and secret environment.
	AgentPod `json:",inline"`
	// Cancel, set to true, stops the task: a task that has not ended ends
	// Failed with reason Cancelled (its pod is stopped, the webhook reports
	// it); an ended task is left as it is. It cannot be unset.
	// +optional
	Cancel bool `json:"cancel,omitempty"`
}

// AgentTaskStatus is the observed state of an AgentTask, taken from its Job and pod.
type AgentTaskStatus struct {
	// Phase is where the task is: Pending, Running, Succeeded, Failed or Timeout.
	// +optional
	Phase TaskPhase `json:"phase,omitempty"`
	// JobName is the name of the task's Job.
	// +optional
	JobName string `json:"jobName,omitempty"`
	// PodName is the name of the pod that ran the agent.
	// +optional
	PodName string `json:"podName,omitempty"`
	// StartTime is when the agent's pod started running.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when the task reached a terminal phase.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Duration is CompletionTime minus StartTime, e.g. "1m30s": how long the
	// agent ran. It is set when the task ends, and stays unset for a task
	// whose agent never started.
	// +optional
	Duration string `json:"duration,omitempty"`
	// Output is the agent's result, read from its termination message: a JSON
	// object of strings is kept as is, any other text under the key "result".
	// +optional
	Output map[string]string `json:"output,omitempty"`
	// Message explains the phase in words, e.g. why the task failed.
	// +optional
	Message string `json:"message,omitempty"`
	// Reason is a CamelCase word for why the task ended, e.g. Completed,
	// Error, DeadlineExceeded, PodDeleted, or, while Pending, for what keeps
	// its agent from starting, e.g. Unschedulable, ImagePullBackOff,
	// ServiceAccountNotFound, QuotaExceeded, Queued (waiting in its Kueue
	// LocalQueue).
	// +optional
	Reason string `json:"reason,omitempty"`
	// ExitCode is the agent container's exit code once it terminated.
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`
	// Webhook records the delivery of the completion webhook.
	// +optional
	Webhook *WebhookDelivery `json:"webhook,omitempty"`
	// Settled is true once the manager is done with the task: it is terminal
	// and its completion webhook, if any, was delivered or given up. It is a
	// selectable field: the tasks manager watches only tasks that are not
	// settled, and `kubectl get agenttasks --field-selector status.settled=true`
	// lists the tasks that are safe to clean up.
	// +optional
	Settled bool `json:"settled,omitempty"`
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Ready (the task succeeded), Reconciling, Stalled,
	// WebhookDelivered and OutputTruncated (the termination message reached
	// the kubelet's limit of 4096 bytes, so only its end was kept).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AgentTask is one ephemeral run of an AI agent as a batch Job. Its status
// tells the truth of the Job and pod: phase, exit code, output and times.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS label (at most 63 lowercase letters, digits and '-'): it names the task's Job"
// +kubebuilder:resource:scope=Namespaced,shortName=at;onat,categories=opsnorth
// +kubebuilder:selectablefield:JSONPath=`.status.settled`
// +kubebuilder:selectablefield:JSONPath=`.spec.userId`
// +kubebuilder:selectablefield:JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Task",type=string,JSONPath=`.spec.taskId`
// +kubebuilder:printcolumn:name="User",type=string,JSONPath=`.spec.userId`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`
// +kubebuilder:printcolumn:name="Exit",type=integer,JSONPath=`.status.exitCode`
// +kubebuilder:printcolumn:name="Started",type=date,JSONPath=`.status.startTime`
// +kubebuilder:printcolumn:name="Duration",type=string,JSONPath=`.status.duration`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`,priority=1
// +kubebuilder:printcolumn:name="Job",type=string,JSONPath=`.status.jobName`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AgentTask struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to run.
	Spec AgentTaskSpec `json:"spec"`
	// Status is what happened.
	// +optional
	Status AgentTaskStatus `json:"status,omitempty"`
}

// AgentTaskList is a list of AgentTasks.
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type AgentTaskList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the AgentTasks.
	Items []AgentTask `json:"items"`
}
