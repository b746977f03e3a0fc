package tasks

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tenancy"
)

func envVar(name, secret, key string) v1alpha1.SecretEnvVar {
	return v1alpha1.SecretEnvVar{Name: name, ValueFrom: v1alpha1.SecretEnvSource{
		SecretKeyRef: v1alpha1.SecretKeyReference{Name: secret, Key: key}}}
}

func envFrom(prefix, secret string) v1alpha1.SecretEnvFromSource {
	return v1alpha1.SecretEnvFromSource{Prefix: prefix, SecretRef: v1alpha1.SecretNameReference{Name: secret}}
}

func TestSecretEnvBuilders(t *testing.T) {
	keyRef := func(name, secret, key string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key, Optional: ptr.To(false)}}}
	}
	checked := SecretKeys{"a": {"TOKEN", "USER"}, "b": {"TOKEN", "URL"}, "empty": nil}
	for _, tc := range []struct {
		name     string
		env      []v1alpha1.SecretEnvVar
		from     []v1alpha1.SecretEnvFromSource
		wantEnv  []corev1.EnvVar
		wantFrom []corev1.EnvVar
	}{
		{name: "none"},
		{name: "empty lists", env: []v1alpha1.SecretEnvVar{}, from: []v1alpha1.SecretEnvFromSource{}},
		{
			name:    "env in the order given, not sorted",
			env:     []v1alpha1.SecretEnvVar{envVar("ZED", "llm", "zed"), envVar("API_KEY", "llm", "api-key"), envVar("B", "other", "b")},
			wantEnv: []corev1.EnvVar{keyRef("ZED", "llm", "zed"), keyRef("API_KEY", "llm", "api-key"), keyRef("B", "other", "b")},
		},
		{
			name:     "envFrom expanded to the checked keys, Secrets in the order given, with and without prefix",
			from:     []v1alpha1.SecretEnvFromSource{envFrom("", "b"), envFrom("GH_", "a")},
			wantFrom: []corev1.EnvVar{keyRef("TOKEN", "b", "TOKEN"), keyRef("URL", "b", "URL"), keyRef("GH_TOKEN", "a", "TOKEN"), keyRef("GH_USER", "a", "USER")},
		},
		{
			name:     "the later Secret wins a name, in the earlier one's place",
			from:     []v1alpha1.SecretEnvFromSource{envFrom("", "a"), envFrom("", "b")},
			wantFrom: []corev1.EnvVar{keyRef("TOKEN", "b", "TOKEN"), keyRef("USER", "a", "USER"), keyRef("URL", "b", "URL")},
		},
		{name: "a Secret without keys, or not checked, adds nothing", from: []v1alpha1.SecretEnvFromSource{envFrom("", "empty"), envFrom("", "unchecked")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.wantEnv, secretEnv(tc.env))
			assert.Equal(t, tc.wantFrom, secretEnvFrom(tc.from, checked))
		})
	}
}

// TestBuildJobSecretEnv: the secret env follows the input's, then envFrom's
// checked keys, each a secretKeyRef; the container has no envFrom, so a
// key added to the Secret after the check never reaches the agent, and no
// value is in the Job.
func TestBuildJobSecretEnv(t *testing.T) {
	task := fullTask()
	task.Spec.Env = []v1alpha1.SecretEnvVar{envVar("API_KEY", "llm", "api-key")}
	task.Spec.EnvFrom = []v1alpha1.SecretEnvFromSource{envFrom("GH_", "github")}
	c := BuildJob(task, Config{}, SecretKeys{"llm": {"api-key"}, "github": {"TOKEN"}}).Spec.Template.Spec.Containers[0]
	require.Len(t, c.Env, 4)
	assert.Equal(t, []string{"A", "PROMPT", "API_KEY", "GH_TOKEN"}, []string{c.Env[0].Name, c.Env[1].Name, c.Env[2].Name, c.Env[3].Name})
	assert.Empty(t, c.Env[2].Value)
	assert.Empty(t, c.Env[3].Value)
	assert.Equal(t, secretEnv(task.Spec.Env)[0], c.Env[2])
	assert.Equal(t, "github", c.Env[3].ValueFrom.SecretKeyRef.Name)
	assert.Empty(t, c.EnvFrom, "no envFrom: only checked keys")
}

func TestEnvNameProblem(t *testing.T) {
	const notAName = "is not an environment variable name (letters, digits and '_', not starting with a digit, at most 128 characters)"
	const refused = "is refused: it changes how the agent loads code, resolves names, trusts certificates, routes traffic or which devices it sees"
	for name, want := range map[string]string{
		"API_KEY": "", "_x": "", "a1": "", strings.Repeat("A", 128): "",
		// They look reserved but are not.
		"LDAP_URL": "", "PROXY_URL": "", "PATH_PREFIX": "", "ENVIRONMENT": "", "MY_HTTP_PROXY": "", "PYTHON_VERSION": "", "NODE_ENV": "",
		"": notAName, "api-key": notAName, "tls.crt": notAName, "1X": notAName, "É": notAName, strings.Repeat("A", 129): notAName,
		"LD_PRELOAD": refused, "ld_preload": refused, "Ld_Library_Path": refused, "DYLD_INSERT_LIBRARIES": refused,
		"BASH_FUNC_x": refused, "KUBERNETES_SERVICE_HOST": refused, "MALLOC_ARENA_MAX": refused, "GLIBC_TUNABLES": refused,
		"https_proxy": refused, "HTTP_PROXY": refused, "NO_PROXY": refused, "SSL_CERT_DIR": refused, "PATH": refused,
		"PYTHONHOME": refused, "NODE_OPTIONS": refused, "_JAVA_OPTIONS": refused, "ENV": refused, "IFS": refused, "PS4": refused,
		// Issue 33's: GPU visibility, runtime hooks, TLS, key logs, endpoints.
		"NVIDIA_VISIBLE_DEVICES": refused, "cuda_visible_devices": refused, "JAVA_OPTS": refused, "DOTNET_STARTUP_HOOKS": refused,
		"GIT_SSH_COMMAND": refused, "OPENSSL_CONF": refused, "SSLKEYLOGFILE": refused, "AWS_ENDPOINT_URL_S3": refused,
		"OPENAI_BASE_URL": refused, "OTEL_EXPORTER_OTLP_ENDPOINT": refused, "PIP_INDEX_URL": refused, "KUBECONFIG": refused,
		"GITHUB_TOKEN": "", "OPENAI_API_KEY": "", "AWS_REGION": "", "CUDA_HOME": "", "JAVA_HOME": "", "DOTNETCORE": "",
	} {
		assert.Equal(t, want, envNameProblem(name), "%q", name)
	}
}

func TestEnvFromProblem(t *testing.T) {
	taken := map[string]string{"PROMPT": "spec.input", "API_KEY": "spec.env[0]"}
	const secret = "agent-tasks/llm"
	for _, tc := range []struct {
		name, prefix string
		keys         []string
		want         string
	}{
		{name: "no keys"},
		{name: "plain keys", keys: []string{"TOKEN", "ORG"}},
		{name: "prefix makes names of keys that are not", prefix: "X_", keys: []string{"1", "_"}},
		{name: "prefix keeps a name off the input", prefix: "LLM_", keys: []string{"PROMPT"}},
		{
			name: "a key that is not a name", keys: []string{"TOKEN", "tls.crt"},
			want: `spec.envFrom[1]: key "tls.crt" of Secret agent-tasks/llm makes the environment variable "tls.crt", which is not an environment variable name`,
		},
		{
			name: "a key that starts with a digit", keys: []string{"1PASSWORD"},
			want: `spec.envFrom[1]: key "1PASSWORD" of Secret agent-tasks/llm makes the environment variable "1PASSWORD", which is not`,
		},
		{
			name: "a refused key", keys: []string{"TOKEN", "ld_preload"},
			want: `spec.envFrom[1]: key "ld_preload" of Secret agent-tasks/llm makes the environment variable "ld_preload", which is refused: it changes how the agent loads code`,
		},
		{
			name: "a prefix that makes a refused name", prefix: "LD_", keys: []string{"PRELOAD"},
			want: `spec.envFrom[1]: key "PRELOAD" of Secret agent-tasks/llm makes the environment variable "LD_PRELOAD", which is refused`,
		},
		{
			name: "a key the input sets", keys: []string{"PROMPT"},
			want: `spec.envFrom[1]: key "PROMPT" of Secret agent-tasks/llm makes the environment variable "PROMPT", which is set by spec.input already`,
		},
		{
			name: "a name env sets, through the prefix", prefix: "API_", keys: []string{"KEY"},
			want: `spec.envFrom[1]: key "KEY" of Secret agent-tasks/llm makes the environment variable "API_KEY", which is set by spec.env[0] already`,
		},
		{
			name: "the first bad key in sorted order", keys: []string{"z-z", "PATH", "a.b"},
			want: `spec.envFrom[1]: key "PATH" of Secret`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := envFromProblem("spec.envFrom[1]", secret, tc.prefix, tc.keys, taken)
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.True(t, strings.HasPrefix(got, tc.want), "got %q, want it to start with %q", got, tc.want)
		})
	}
}

func TestTakenEnvNames(t *testing.T) {
	task := &v1alpha1.AgentTask{Spec: v1alpha1.AgentTaskSpec{Input: map[string]string{"PROMPT": "p"}}}
	task.Spec.Env = []v1alpha1.SecretEnvVar{envVar("A", "s", "a"), envVar("B", "s", "b")}
	assert.Equal(t, map[string]string{"PROMPT": "spec.input", "A": "spec.env[0]", "B": "spec.env[1]"}, takenEnvNames(task))
}

// TestReferencesOfSecretEnv: each Secret env and envFrom read must exist and
// be allowed, listed once with the first field that names it; a webhook
// Secret that env also reads must exist.
func TestReferencesOfSecretEnv(t *testing.T) {
	task := &v1alpha1.AgentTask{Spec: v1alpha1.AgentTaskSpec{
		ImagePullSecrets: []string{"pull"},
		WebhookSecretRef: &v1alpha1.SecretKeyReference{Name: "llm", Key: "hook"},
	}}
	task.Spec.Env = []v1alpha1.SecretEnvVar{envVar("A", "llm", "a"), envVar("B", "pull", "b"), envVar("C", "llm", "c"), envVar("D", "other", "d")}
	task.Spec.EnvFrom = []v1alpha1.SecretEnvFromSource{envFrom("", "other"), envFrom("GH_", "github")}
	secret := func(field, name string) reference {
		return reference{Ref: tenancy.Ref{Field: field, Kind: "Secret", Name: name}}
	}
	assert.Equal(t, []reference{
		secret("spec.imagePullSecrets[0]", "pull"),
		secret("spec.env[0].valueFrom.secretKeyRef.name", "llm"),
		secret("spec.env[3].valueFrom.secretKeyRef.name", "other"),
		secret("spec.envFrom[1].secretRef.name", "github"),
	}, references(task))

	task.Spec.Env, task.Spec.EnvFrom = nil, nil
	assert.Equal(t, []reference{
		secret("spec.imagePullSecrets[0]", "pull"),
		{Ref: tenancy.Ref{Field: "spec.webhookSecretRef", Kind: "Secret", Name: "llm"}, mayBeMissing: true},
	}, references(task), "a webhook Secret alone may be missing")
}

// celMatches finds the regular expressions CEL rules match upper-cased names
// against: `upperAscii().matches('...')`.
var celMatches = regexp.MustCompile(`upperAscii\(\)\.matches\('([^'\\]*)'\)`)

// celName finds the name rule of input keys: `k.matches('...') && size(k) <= N`.
var celName = regexp.MustCompile(`k\.matches\('([^'\\]*)'\) && size\(k\) <= (\d+)`)

// TestRefusedEnvNamesMatchTheCRD: the Go rules the manager applies to the
// names envFrom makes are the CRDs' rules of input keys and env names,
// character for character.
func TestRefusedEnvNamesMatchTheCRD(t *testing.T) {
	for _, file := range []string{"scheduler.opsnorth.io_agenttasks.yaml", "scheduler.opsnorth.io_workflows.yaml"} {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile("../../manifests/crd/" + file)
			require.NoError(t, err)
			crd := &apiextensionsv1.CustomResourceDefinition{}
			require.NoError(t, yaml.UnmarshalStrict(data, crd))
			require.Len(t, crd.Spec.Versions, 1)
			refused, names := map[string][]string{}, map[string][]string{}
			walkRules(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, "", func(path string, v apiextensionsv1.ValidationRule) {
				for _, text := range []string{v.Rule, v.MessageExpression} {
					for _, m := range celMatches.FindAllStringSubmatch(text, -1) {
						refused[path] = append(refused[path], m[1])
					}
					for _, m := range celName.FindAllStringSubmatch(text, -1) {
						names[path] = append(names[path], m[1]+" "+m[2])
					}
				}
			})
			input, env := ".spec.input", ".spec.env[].name"
			if file == "scheduler.opsnorth.io_workflows.yaml" {
				input, env = ".spec.steps[].input", ".spec.steps[].env[].name"
			}
			require.Contains(t, refused, input)
			require.Contains(t, refused, env)
			require.Contains(t, names, input)
			for path, patterns := range refused {
				slices.Sort(patterns)
				assert.Equal(t, slices.Sorted(slices.Values(refusedEnvNamePatterns)), slices.Compact(patterns), "the refused names at %s", path)
			}
			for path, rules := range names {
				for _, r := range rules {
					assert.Equal(t, envNamePattern+" 128", r, "the name rule at %s", path)
				}
			}
			assert.Equal(t, 128, maxEnvName)
		})
	}
}

// walkRules calls visit with every CEL rule of the schema s at path and
// below it.
func walkRules(s *apiextensionsv1.JSONSchemaProps, path string, visit func(string, apiextensionsv1.ValidationRule)) {
	if s == nil {
		return
	}
	for _, v := range s.XValidations {
		visit(path, v)
	}
	for name, p := range s.Properties {
		walkRules(&p, path+"."+name, visit)
	}
	if s.Items != nil {
		walkRules(s.Items.Schema, path+"[]", visit)
	}
	if s.AdditionalProperties != nil {
		walkRules(s.AdditionalProperties.Schema, path+"{}", visit)
	}
}

// TestEnvFromCountProblem: envFrom may make at most maxEnvFromVars
// variables in all, each Secret counted once per entry that reads it.
func TestEnvFromCountProblem(t *testing.T) {
	many := make([]string, maxEnvFromVars)
	for i := range many {
		many[i] = fmt.Sprintf("K%d", i)
	}
	keys := SecretKeys{"big": many, "one": {"X"}}
	assert.Empty(t, envFromCountProblem([]v1alpha1.SecretEnvFromSource{envFrom("", "big")}, keys), "at the bound")
	assert.Empty(t, envFromCountProblem(nil, keys))
	assert.Equal(t, "spec.envFrom: its Secrets make 257 environment variables, more than the 256 a task may read this way: use env for the keys the agent needs",
		envFromCountProblem([]v1alpha1.SecretEnvFromSource{envFrom("", "big"), envFrom("P_", "one")}, keys))
}
