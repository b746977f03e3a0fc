package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
)

// AgentPod is how the agent's pod is placed and which Secrets it reads, the
// same on an AgentTask and on a Workflow step (whose task copies it). The
// tasks manager's --pod-defaults may set any of these fields for every
// agent and forbid other values (kubectl explain agenttask.spec explains
// the refusal reason PodDefaultsEnforced).
type AgentPod struct {
	// Env are environment variables read from Secret keys, in the shape of a
	// container's env with valueFrom.secretKeyRef. Names follow the rules of
	// input keys and may not repeat an input key. Only Secrets of the task's
	// namespace that are labelled for the task's user (or shared) can be
	// read; a missing Secret or key keeps the task Pending with reason
	// SecretNotFound or SecretKeyNotFound until it exists or the start
	// timeout passes. Values never appear in the task, its Job or its
	// status: the kubelet reads them. At most 20 (the admission cost of a
	// Workflow's 50 steps bounds it): envFrom takes a whole Secret.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=20
	Env []SecretEnvVar `json:"env,omitempty"`
	// EnvFrom makes every key of a Secret an environment variable, in the
	// shape of a container's envFrom with secretRef, optionally with a
	// prefix. The same Secrets can be read as through env; each resulting
	// name must follow the rules of input keys and not repeat an input key
	// or env name, or the task does not start (reason SecretKeyRefused,
	// until the Secret is fixed or the start timeout passes). The keys are
	// checked when the Job is created, and the Job gets one secretKeyRef
	// per key checked: a key added to the Secret later never reaches the
	// agent. At most 256 variables in all come from envFrom (else
	// SecretKeyRefused).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	EnvFrom []SecretEnvFromSource `json:"envFrom,omitempty"`
	// NodeSelector must match a node's labels for the agent's pod to run
	// there. Only keys the platform allows (allowedNodeLabels of the tasks
	// manager's --pod-defaults) may be used, else the task fails with reason
	// PlacementNotAllowed, as for the other placement fields.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations let the agent's pod run on nodes with matching taints:
	// only within the platform's allowedTolerations.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(t, (!has(t.operator) || t.operator in ['Exists', 'Equal']) && (!has(t.effect) || t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute']))",message="tolerations: operator must be Exists or Equal, effect NoSchedule, PreferNoSchedule or NoExecute"
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Affinity is the pod's node and pod (anti-)affinity. Node affinity may
	// use only allowed node labels; pod (anti-)affinity terms only the
	// task's own namespace and topology key kubernetes.io/hostname (or keys
	// the platform allows), and each is narrowed to the pods of the task's
	// own user.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// PriorityClassName is the PriorityClass of the agent's pod: one the
	// platform allows tasks to choose (allowedPriorityClasses of the tasks
	// manager's --pod-defaults), else the task fails with reason
	// PriorityClassNotAllowed.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// RuntimeClassName is the RuntimeClass the agent's pod runs with, e.g. a
	// sandboxed runtime such as gVisor for untrusted agent code: only one
	// the platform allows (allowedRuntimeClasses).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	RuntimeClassName string `json:"runtimeClassName,omitempty"`
	// PodMetadata are labels and annotations added to the agent's pod:
	// keys under user.opsnorth.io/ and the prefixes the platform allows.
	// +optional
	PodMetadata *PodMetadata `json:"podMetadata,omitempty"`
	// QueueName is the Kueue LocalQueue (in the task's namespace) that
	// admits the agent: its Job is created suspended with the
	// kueue.x-k8s.io/queue-name label, and while Kueue holds it the task is
	// Pending with reason Queued. The start timeout counts from admission.
	// The LocalQueue must be labelled scheduler.opsnorth.io/user=<userId>
	// or scheduler.opsnorth.io/shared=true (else the task fails, reason
	// ReferenceNotAllowed); while it does not exist the task is Pending,
	// reason QueueNotFound.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	QueueName string `json:"queueName,omitempty"`
}

// PodMetadata are labels and annotations for the agent's pod. Keys in the
// kubernetes.io, k8s.io and opsnorth.io prefixes (and their subdomains,
// but for user.opsnorth.io/) are refused: they belong to Kubernetes and to
// this manager. The tasks manager allows only keys under user.opsnorth.io/
// and the prefixes the platform's --pod-defaults add; other keys fail the
// task with reason PodMetadataNotAllowed, as do label keys the platform's
// NetworkPolicies select on.
type PodMetadata struct {
	// Labels are added to the pod's labels.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, !(k.contains('/') && (k.split('/')[0] in ['kubernetes.io', 'k8s.io', 'opsnorth.io'] || k.split('/')[0].endsWith('.kubernetes.io') || k.split('/')[0].endsWith('.k8s.io') || (k.split('/')[0].endsWith('.opsnorth.io') && k.split('/')[0] != 'user.opsnorth.io'))))",message="podMetadata.labels: keys in the kubernetes.io, k8s.io and opsnorth.io prefixes are reserved"
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are added to the pod's annotations.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, !(k.contains('/') && (k.split('/')[0] in ['kubernetes.io', 'k8s.io', 'opsnorth.io'] || k.split('/')[0].endsWith('.kubernetes.io') || k.split('/')[0].endsWith('.k8s.io') || (k.split('/')[0].endsWith('.opsnorth.io') && k.split('/')[0] != 'user.opsnorth.io'))))",message="podMetadata.annotations: keys in the kubernetes.io, k8s.io and opsnorth.io prefixes are reserved"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && size(self[k]) <= 8192)",message="podMetadata.annotations: keys at most 317 and values at most 8192 characters"
	Annotations map[string]string `json:"annotations,omitempty"`
}

// SecretEnvVar is one environment variable read from a Secret key.
type SecretEnvVar struct {
	// Name of the environment variable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	// +kubebuilder:validation:XValidation:rule="!self.upperAscii().matches('^(LD_|DYLD_|MALLOC_|BASH_FUNC_|DOTNET_|CORECLR_|COR_|COMPLUS_|GIT_|OPENSSL_|AWS_ENDPOINT_URL|OTEL_EXPORTER_|NPM_CONFIG_|NVIDIA_|KUBERNETES_)')",messageExpression="'env name ' + self + ' is refused: it changes how the agent loads code, resolves names, trusts certificates, routes traffic or which devices it sees'"
	// +kubebuilder:validation:XValidation:rule="!self.upperAscii().matches('^(GLIBC_TUNABLES|GCONV_PATH|NLSPATH|LOCPATH|PATH|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|IFS|PROMPT_COMMAND|ZDOTDIR|SSH_ASKPASS|PYTHONPATH|PYTHONHOME|PYTHONSTARTUP|PYTHONINSPECT|PYTHONWARNINGS|PYTHONBREAKPOINT|PYTHONUSERBASE|PERL5LIB|PERL5OPT|PERL5DB|PERLLIB|RUBYLIB|RUBYOPT|NODE_OPTIONS|NODE_PATH|NODE_REPL_EXTERNAL_MODULE|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|JAVA_OPTS|MAVEN_OPTS|GRADLE_OPTS|SBT_OPTS|CATALINA_OPTS|CLASSPATH|GODEBUG|GOFLAGS|HOSTALIASES|LOCALDOMAIN|RES_OPTIONS|RESOLV_HOST_CONF|HTTP_PROXY|HTTPS_PROXY|ALL_PROXY|NO_PROXY|FTP_PROXY|GRPC_PROXY|SOCKS_PROXY|SOCKS5_PROXY)$')",messageExpression="'env name ' + self + ' is refused: it changes how the agent loads code, resolves names, trusts certificates, routes traffic or which devices it sees'"
	// +kubebuilder:validation:XValidation:rule="!self.upperAscii().matches('^(SSL_CERT_FILE|SSL_CERT_DIR|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|NODE_EXTRA_CA_CERTS|NODE_TLS_REJECT_UNAUTHORIZED|PYTHONHTTPSVERIFY|AWS_CA_BUNDLE|PIP_CERT|GRPC_DEFAULT_SSL_ROOTS_FILE_PATH|VAULT_CACERT|VAULT_CAPATH|VAULT_SKIP_VERIFY|SSLKEYLOGFILE|AWS_CONTAINER_CREDENTIALS_FULL_URI|AWS_CONTAINER_CREDENTIALS_RELATIVE_URI|AWS_EC2_METADATA_SERVICE_ENDPOINT|OPENAI_BASE_URL|OPENAI_API_BASE|ANTHROPIC_BASE_URL|AZURE_OPENAI_ENDPOINT|OLLAMA_HOST|HF_ENDPOINT|PIP_INDEX_URL|PIP_EXTRA_INDEX_URL|PIP_TRUSTED_HOST|UV_INDEX_URL|UV_EXTRA_INDEX_URL|UV_DEFAULT_INDEX|GOPROXY|GOSUMDB|GONOSUMDB|GOINSECURE|DOCKER_HOST)$')",messageExpression="'env name ' + self + ' is refused: it changes how the agent loads code, resolves names, trusts certificates, routes traffic or which devices it sees'"
	// +kubebuilder:validation:XValidation:rule="!self.upperAscii().matches('^(KUBECONFIG|VAULT_ADDR|CUDA_VISIBLE_DEVICES|ROCR_VISIBLE_DEVICES|HIP_VISIBLE_DEVICES|HABANA_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL)$')",messageExpression="'env name ' + self + ' is refused: it changes how the agent loads code, resolves names, trusts certificates, routes traffic or which devices it sees'"
	Name string `json:"name"`
	// ValueFrom names the Secret key.
	ValueFrom SecretEnvSource `json:"valueFrom"`
}

// SecretEnvSource is where a SecretEnvVar's value comes from.
type SecretEnvSource struct {
	// SecretKeyRef selects a key of a Secret in the task's namespace.
	SecretKeyRef SecretKeyReference `json:"secretKeyRef"`
}

// SecretEnvFromSource makes every key of a Secret an environment variable.
type SecretEnvFromSource struct {
	// Prefix is put before every key.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	Prefix string `json:"prefix,omitempty"`
	// SecretRef names the Secret, in the task's namespace.
	SecretRef SecretNameReference `json:"secretRef"`
}

// SecretNameReference names a Secret in the object's own namespace.
type SecretNameReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}
