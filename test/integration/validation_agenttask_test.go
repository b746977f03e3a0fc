package integration

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/pkg/tasks"
)

// invalidAgentTaskCases break one AgentTask rule each.
func invalidAgentTaskCases() []invalidCase {
	return append(reservedInputKeyCases("agenttask", "spec.input", func(key string) objectFactory {
		return newAgentTask(func(a *agentTask) { a.Spec.Input[key] = "x" })
	}), []invalidCase{
		{
			name:  "agenttask taskId with a slash",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.TaskID = "task/0001" }),
			field: "spec.taskId", msg: "should match '^[A-Za-z0-9]([-_.A-Za-z0-9]*[A-Za-z0-9])?$'",
		},
		{
			name:  "agenttask taskId too long",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.TaskID = strings.Repeat("t", 64) }),
			field: "spec.taskId", msg: "may not be more than 63",
		},
		{
			name:  "agenttask userId with spaces",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.UserID = "alice smith" }),
			field: "spec.userId", msg: "should match",
		},
		{
			name:  "agenttask image with spaces",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.Image = "ghcr.io/opsnorth/agent :1.2" }),
			field: "spec.image", msg: `should match '^[^\s]+$'`,
		},
		{
			name:  "agenttask timeoutSeconds zero",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.TimeoutSeconds = ptr.To[int64](0) }),
			field: "spec.timeoutSeconds", msg: "should be greater than or equal to 1",
		},
		{
			name:  "agenttask timeoutSeconds above a week",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.TimeoutSeconds = ptr.To[int64](604801) }),
			field: "spec.timeoutSeconds", msg: "should be less than or equal to 604800",
		},
		{
			name:  "agenttask ttl negative",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.TTLSecondsAfterFinished = ptr.To[int32](-1) }),
			field: "spec.ttlSecondsAfterFinished", msg: "should be greater than or equal to 0",
		},
		{
			name:  "agenttask webhookUrl not a URL",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.WebhookURL = "not a url" }),
			field: "spec.webhookUrl", msg: "webhookUrl must be an absolute http or https URL",
		},
		{
			name:  "agenttask webhookUrl ftp scheme",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.WebhookURL = "ftp://hooks.example.com/agent-tasks" }),
			field: "spec.webhookUrl", msg: "webhookUrl must be an absolute http or https URL",
		},
		{
			name:  "agenttask webhookUrl relative",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.WebhookURL = "/agent-tasks/done" }),
			field: "spec.webhookUrl", msg: "webhookUrl must be an absolute http or https URL",
		},
		{
			name:  "agenttask webhookSecretRef key with a slash",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.WebhookSecretRef.Key = "signing/key" }),
			field: "spec.webhookSecretRef.key", msg: "should match",
		},
		{
			name:  "agenttask input key not an env name",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.Input["repo-url"] = "x" }),
			field: "spec.input", msg: "input keys must be environment variable names",
		},
		{
			name:  "agenttask input over the total limit",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.Input = bulkyInput(9, 30000) }),
			field: "spec.input", msg: "input must be at most 262144 bytes in all, keys and values together",
		},
		{
			name:  "agenttask input value too long",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.Input["PROMPT"] = strings.Repeat("p", 32769) }),
			field: "spec.input", msg: "each input value must be at most 32768 characters",
		},
		{
			name:  "agenttask memory request above limit",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.Resources.Requests.Memory = quantity("2Gi") }),
			field: "spec.resources", msg: "each request must not exceed the limit of the same resource",
		},
		{
			name:  "agenttask negative cpu request",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.Resources.Requests.CPU = quantity("-100m") }),
			field: "spec.resources.requests.cpu", msg: "must be greater than zero",
		},
		{
			name:  "agenttask zero memory request",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.Resources.Requests.Memory = quantity("0") }),
			field: "spec.resources.requests.memory", msg: "must be greater than zero",
		},
		{
			name:  "agenttask serviceAccountName uppercase",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.ServiceAccountName = "Review-Agent" }),
			field: "spec.serviceAccountName", msg: "should match",
		},
		{
			name:  "agenttask imagePullSecrets entry with underscore",
			obj:   newAgentTask(func(a *agentTask) { a.Spec.ImagePullSecrets = []string{"ghcr_pull"} }),
			field: "spec.imagePullSecrets[0]", msg: "should match",
		},
		{
			name:  "agenttask name too long",
			obj:   newAgentTask(func(a *agentTask) { a.Name = tooLongName }),
			field: objectRoot, msg: "metadata.name must be a DNS label",
		},
		{
			name:  "agenttask name not a DNS label",
			obj:   newAgentTask(func(a *agentTask) { a.Name = dottedName }),
			field: objectRoot, msg: "metadata.name must be a DNS label",
		},
		{
			name:  "agenttask missing image",
			obj:   newAgentTask(nil),
			unset: []string{"spec.image"},
			field: "spec.image", msg: "Required value",
		},
		{
			name:  "agenttask missing taskId",
			obj:   newAgentTask(nil),
			unset: []string{"spec.taskId"},
			field: "spec.taskId", msg: "Required value",
		},
		{
			name:   "agenttask update spec",
			obj:    newAgentTask(nil),
			update: as(func(a *agentTask) { a.Spec.TimeoutSeconds = ptr.To[int64](1200) }),
			field:  "spec", msg: "spec is immutable apart from cancel: create a new AgentTask to run again",
		},
	}...)
}

// reservedInputKeys are every name the tasks manager's deny-list refuses
// (each prefix with a suffix, each name, some in lower or mixed case) and
// the issue's own examples: the API server must refuse each, so the CRDs
// and the manager never disagree.
var reservedInputKeys = func() []string {
	out := []string{"ld_library_path", "https_proxy", "Nvidia_Visible_Devices", "BASH_FUNC_x%%",
		"NVIDIA_VISIBLE_DEVICES", "JAVA_OPTS", "DOTNET_STARTUP_HOOKS", "GIT_SSH_COMMAND", "OPENSSL_CONF", "SSLKEYLOGFILE"}
	for _, c := range tasks.RefusedEnvNames {
		for _, p := range c.Prefixes {
			out = append(out, p+"X")
		}
		out = append(out, c.Names...)
	}
	return out
}()

// allowedInputKeys look like reserved ones but are not.
var allowedInputKeys = []string{"LDAP_URL", "PROXY_URL", "PATH_PREFIX", "ENVIRONMENT", "MY_HTTP_PROXY", "PYTHON_VERSION", "NODE_ENV",
	"GITHUB_TOKEN", "OPENAI_API_KEY", "AWS_REGION", "CUDA_HOME", "DOTNETCORE", "JAVA_HOME"}

func reservedInputKeyCases(kind, field string, withKey func(string) objectFactory) []invalidCase {
	var out []invalidCase
	for _, key := range reservedInputKeys {
		if !envName.MatchString(key) {
			continue
		}
		out = append(out, invalidCase{
			name: kind + " input key " + key, obj: withKey(key),
			field: field, msg: "input key " + key + " is refused: it changes how the agent loads code",
		})
	}
	return out
}

// envName is the key rule of a task input; reserved keys that break it are
// refused by that rule instead.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// bulkyInput returns n keys with values of size bytes each.
func bulkyInput(n, size int) map[string]string {
	in := map[string]string{}
	for i := range n {
		in[fmt.Sprintf("K%d", i)] = strings.Repeat("v", size)
	}
	return in
}
