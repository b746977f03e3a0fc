package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types shared by every kind. Ready, Reconciling and Stalled follow
// the kstatus conventions, so `kubectl wait --for=condition=Ready` and
// kstatus-aware tools (Flux, Argo CD, cli-utils) read them without custom code.
const (
	// ConditionReady is True when the object reached the state its spec asks for.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the manager is still working towards the spec.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when progress needs a change by a human (bad input,
	// missing template); the reason and message say what.
	ConditionStalled = "Stalled"
)

// Condition types of the kinds that run to completion (AgentTask, Workflow),
// named and set as a batch Job's, so `kubectl wait --for=condition=Complete`
// and `--for=condition=Failed` work on them as on Jobs. At most one is
// present, and only once the object ended.
const (
	// ConditionComplete is True once the object succeeded.
	ConditionComplete = "Complete"
	// ConditionFailed is True once the object ended in failure, with the
	// failure's reason and message (a retried Workflow loses it again).
	ConditionFailed = "Failed"
)

// ResourceRequirements are the compute resources of one container.
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || ((!has(self.requests.cpu) || !has(self.limits.cpu) || quantity(string(self.requests.cpu)).compareTo(quantity(string(self.limits.cpu))) <= 0) && (!has(self.requests.memory) || !has(self.limits.memory) || quantity(string(self.requests.memory)).compareTo(quantity(string(self.limits.memory))) <= 0) && (!has(self.requests.ephemeralStorage) || !has(self.limits.ephemeralStorage) || quantity(string(self.requests.ephemeralStorage)).compareTo(quantity(string(self.limits.ephemeralStorage))) <= 0))",message="each request must not exceed the limit of the same resource"
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.requests.extended) || (has(self.limits) && has(self.limits.extended) && self.requests.extended.all(k, k in self.limits.extended && quantity(string(self.requests.extended[k])).compareTo(quantity(string(self.limits.extended[k]))) == 0))",message="extended resources cannot be overcommitted: each in requests.extended must be in limits.extended with the same amount"
type ResourceRequirements struct {
	// Requests is the minimum amount of each resource the container needs; the
	// scheduler places the pod only where this much is free.
	// +optional
	Requests *ResourceAmounts `json:"requests,omitempty"`
	// Limits is the most of each resource the container may use. A container
	// above its memory limit is killed; above its CPU limit it is throttled.
	// +optional
	Limits *ResourceAmounts `json:"limits,omitempty"`
}

// ResourceAmounts are amounts of the compute resources a container can ask for.
type ResourceAmounts struct {
	// CPU in cores, e.g. 500m or 2.
	// +optional
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="must be greater than zero: a zero or negative amount means nothing to the scheduler or the kubelet"
	CPU *resource.Quantity `json:"cpu,omitempty"`
	// Memory in bytes, e.g. 256Mi or 2Gi.
	// +optional
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="must be greater than zero: a zero or negative amount means nothing to the scheduler or the kubelet"
	Memory *resource.Quantity `json:"memory,omitempty"`
	// EphemeralStorage is local scratch disk in bytes, e.g. 1Gi.
	// +optional
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="must be greater than zero: a zero or negative amount means nothing to the scheduler or the kubelet"
	EphemeralStorage *resource.Quantity `json:"ephemeralStorage,omitempty"`
	// Extended are extended resources by name, e.g. nvidia.com/gpu: 1. They
	// are whole numbers and cannot be overcommitted: what requests name must
	// equal limits.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && !(k.split('/')[0] == 'kubernetes.io' || k.split('/')[0].endsWith('.kubernetes.io') || k.split('/')[0] == 'requests'))",message="extended resource names are domain/name, e.g. nvidia.com/gpu, outside kubernetes.io"
	// +kubebuilder:validation:XValidation:rule="self.all(k, quantity(string(self[k])).isInteger() && quantity(string(self[k])).isGreaterThan(quantity('0')))",message="extended resources must be whole numbers greater than zero"
	Extended map[string]resource.Quantity `json:"extended,omitempty"`
}

// SecretKeyReference selects one key of a Secret in the object's own namespace.
type SecretKeyReference struct {
	// Name of the Secret, in the same namespace as the object that references it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// Key within the Secret's data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
}

// Task input limits: the CEL rules of TaskInput enforce them at admission, and
// the workflows manager stops expanding a step's input at them.
const (
	// MaxInputValueBytes is the most bytes one input value may hold.
	MaxInputValueBytes = 32768
	// MaxInputBytes is the most bytes a task's input may hold in all, keys
	// and values together.
	MaxInputBytes = 262144
)

// Task output limit. The kubelet keeps only the last
// MaxTerminationMessageBytes of a container's termination message
// (kubecontainer.MaxContainerTerminationMessageLength), which is where an
// agent's output comes from: a message that long was most likely cut, and
// the task shows the condition ConditionOutputTruncated.
const (
	MaxTerminationMessageBytes = 4096
	ConditionOutputTruncated   = "OutputTruncated"
	// ReasonOutputTruncated is the reason of that condition, and of a
	// workflow step that reads a truncated output.
	ReasonOutputTruncated = "OutputTruncated"
)

// TaskInput is a task's input: one environment variable per key. The rules
// are explained on AgentTaskSpec.Input.
// +kubebuilder:validation:MaxProperties=128
// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z_][A-Za-z0-9_]*$') && size(k) <= 128)",message="input keys must be environment variable names: letters, digits and '_', not starting with a digit, at most 128 characters"
// +kubebuilder:validation:XValidation:rule="self.all(k, !k.upperAscii().matches('^(LD_|DYLD_|MALLOC_|BASH_FUNC_|DOTNET_|CORECLR_|COR_|COMPLUS_|GIT_|OPENSSL_|AWS_ENDPOINT_URL|OTEL_EXPORTER_|NPM_CONFIG_|NVIDIA_|KUBERNETES_)'))",messageExpression="'input key ' + self.filter(k, k.upperAscii().matches('^(LD_|DYLD_|MALLOC_|BASH_FUNC_|DOTNET_|CORECLR_|COR_|COMPLUS_|GIT_|OPENSSL_|AWS_ENDPOINT_URL|OTEL_EXPORTER_|NPM_CONFIG_|NVIDIA_|KUBERNETES_)'))[0] + ' is refused: it changes how the agent loads code, resolves names, trusts certificates, routes traffic or which devices it sees'"
// +kubebuilder:validation:XValidation:rule="self.all(k, !k.upperAscii().matches('^(GLIBC_TUNABLES|GCONV_PATH|NLSPATH|LOCPATH|PATH|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|IFS|PROMPT_COMMAND|ZDOTDIR|SSH_ASKPASS|PYTHONPATH|PYTHONHOME|PYTHONSTARTUP|PYTHONINSPECT|PYTHONWARNINGS|PYTHONBREAKPOINT|PYTHONUSERBASE|PERL5LIB|PERL5OPT|PERL5DB|PERLLIB|RUBYLIB|RUBYOPT|NODE_OPTIONS|NODE_PATH|NODE_REPL_EXTERNAL_MODULE|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|JAVA_OPTS|MAVEN_OPTS|GRADLE_OPTS|SBT_OPTS|CATALINA_OPTS|CLASSPATH|GODEBUG|GOFLAGS|HOSTALIASES|LOCALDOMAIN|RES_OPTIONS|RESOLV_HOST_CONF|HTTP_PROXY|HTTPS_PROXY|ALL_PROXY|NO_PROXY|FTP_PROXY|GRPC_PROXY|SOCKS_PROXY|SOCKS5_PROXY)$'))",messageExpression="'input key ' + self.filter(k, k.upperAscii().matches('^(GLIBC_TUNABLES|GCONV_PATH|NLSPATH|LOCPATH|PATH|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|IFS|PROMPT_COMMAND|ZDOTDIR|SSH_ASKPASS|PYTHONPATH|PYTHONHOME|PYTHONSTARTUP|PYTHONINSPECT|PYTHONWARNINGS|PYTHONBREAKPOINT|PYTHONUSERBASE|PERL5LIB|PERL5OPT|PERL5DB|PERLLIB|RUBYLIB|RUBYOPT|NODE_OPTIONS|NODE_PATH|NODE_REPL_EXTERNAL_MODULE|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|JAVA_OPTS|MAVEN_OPTS|GRADLE_OPTS|SBT_OPTS|CATALINA_OPTS|CLASSPATH|GODEBUG|GOFLAGS|HOSTALIASES|LOCALDOMAIN|RES_OPTIONS|RESOLV_HOST_CONF|HTTP_PROXY|HTTPS_PROXY|ALL_PROXY|NO_PROXY|FTP_PROXY|GRPC_PROXY|SOCKS_PROXY|SOCKS5_PROXY)$'))[0] + ' is refused: it changes how the agent loads code, resolves names, trusts certificates, routes traffic or which devices it sees'"
// +kubebuilder:validation:XValidation:rule="self.all(k, !k.upperAscii().matches('^(SSL_CERT_FILE|SSL_CERT_DIR|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|NODE_EXTRA_CA_CERTS|NODE_TLS_REJECT_UNAUTHORIZED|PYTHONHTTPSVERIFY|AWS_CA_BUNDLE|PIP_CERT|GRPC_DEFAULT_SSL_ROOTS_FILE_PATH|VAULT_CACERT|VAULT_CAPATH|VAULT_SKIP_VERIFY|SSLKEYLOGFILE|AWS_CONTAINER_CREDENTIALS_FULL_URI|AWS_CONTAINER_CREDENTIALS_RELATIVE_URI|AWS_EC2_METADATA_SERVICE_ENDPOINT|OPENAI_BASE_URL|OPENAI_API_BASE|ANTHROPIC_BASE_URL|AZURE_OPENAI_ENDPOINT|OLLAMA_HOST|HF_ENDPOINT|PIP_INDEX_URL|PIP_EXTRA_INDEX_URL|PIP_TRUSTED_HOST|UV_INDEX_URL|UV_EXTRA_INDEX_URL|UV_DEFAULT_INDEX|GOPROXY|GOSUMDB|GONOSUMDB|GOINSECURE|DOCKER_HOST)$'))",messageExpression="'input key ' + self.filter(k, k.upperAscii().matches('^(SSL_CERT_FILE|SSL_CERT_DIR|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|NODE_EXTRA_CA_CERTS|NODE_TLS_REJECT_UNAUTHORIZED|PYTHONHTTPSVERIFY|AWS_CA_BUNDLE|PIP_CERT|GRPC_DEFAULT_SSL_ROOTS_FILE_PATH|VAULT_CACERT|VAULT_CAPATH|VAULT_SKIP_VERIFY|SSLKEYLOGFILE|AWS_CONTAINER_CREDENTIALS_FULL_URI|AWS_CONTAINER_CREDENTIALS_RELATIVE_URI|AWS_EC2_METADATA_SERVICE_ENDPOINT|OPENAI_BASE_URL|OPENAI_API_BASE|ANTHROPIC_BASE_URL|AZURE_OPENAI_ENDPOINT|OLLAMA_HOST|HF_ENDPOINT|PIP_INDEX_URL|PIP_EXTRA_INDEX_URL|PIP_TRUSTED_HOST|UV_INDEX_URL|UV_EXTRA_INDEX_URL|UV_DEFAULT_INDEX|GOPROXY|GOSUMDB|GONOSUMDB|GOINSECURE|DOCKER_HOST)$'))[0] + ' is refused: it changes how the agent loads code, resolves names, trusts certificates, routes traffic or which devices it sees'"
// +kubebuilder:validation:XValidation:rule="self.all(k, !k.upperAscii().matches('^(KUBECONFIG|VAULT_ADDR|CUDA_VISIBLE_DEVICES|ROCR_VISIBLE_DEVICES|HIP_VISIBLE_DEVICES|HABANA_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL)$'))",messageExpression="'input key ' + self.filter(k, k.upperAscii().matches('^(KUBECONFIG|VAULT_ADDR|CUDA_VISIBLE_DEVICES|ROCR_VISIBLE_DEVICES|HIP_VISIBLE_DEVICES|HABANA_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL)$'))[0] + ' is refused: it changes how the agent loads code, resolves names, trusts certificates, routes traffic or which devices it sees'"
// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= 32768)",message="each input value must be at most 32768 characters"
// +kubebuilder:validation:XValidation:rule="self.map(k, size(k) + size(self[k])).sum() <= 262144",message="input must be at most 262144 bytes in all, keys and values together"
type TaskInput map[string]string

// EnvVar is one environment variable with a literal value.
type EnvVar struct {
	// Name of the variable: letters, digits and underscores, not starting with a digit.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	Name string `json:"name"`
	// Value of the variable.
	// +optional
	// +kubebuilder:validation:MaxLength=32768
	Value string `json:"value,omitempty"`
}

// ConfigFile is a file mounted read-only into a container.
type ConfigFile struct {
	// Path is the absolute path of the file inside the container, e.g. /etc/app/config.yaml.
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^/[^\x00-\x1f\x7f]*[^/]$`
	// +kubebuilder:validation:XValidation:rule="!self.contains('/../') && !self.endsWith('/..') && !self.contains('/./') && !self.endsWith('/.') && !self.contains('//')",message="path must be a clean absolute file path without '.', '..' or '//' segments"
	Path string `json:"path"`
	// Content is the file's text.
	// +kubebuilder:validation:MaxLength=262144
	Content string `json:"content"`
}

// WebhookDelivery records the delivery of a completion webhook. Delivery is
// at-least-once: the receiver deduplicates by the Idempotency-Key header.
type WebhookDelivery struct {
	// Attempts is the number of requests sent so far.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// Delivered is true once the receiver answered with a 2xx status. A
	// delivered webhook is never sent again.
	// +optional
	Delivered bool `json:"delivered,omitempty"`
	// GaveUp is true when the attempts were exhausted without a 2xx answer.
	// +optional
	GaveUp bool `json:"gaveUp,omitempty"`
	// LastStatusCode is the HTTP status of the last answer; 0 when the last
	// attempt got no answer (connection refused, timeout, refused address).
	// +optional
	LastStatusCode int32 `json:"lastStatusCode,omitempty"`
	// LastAttemptTime is when the last request was sent.
	// +optional
	LastAttemptTime *metav1.Time `json:"lastAttemptTime,omitempty"`
	// LastError describes why the last attempt failed, without the response body.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	LastError string `json:"lastError,omitempty"`
}
