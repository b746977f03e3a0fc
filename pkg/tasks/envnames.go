package tasks

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// envNamePattern and maxEnvName are the rule of input keys (TaskInput's
// CEL rules), which env names and the names envFrom makes follow too.
const (
	envNamePattern = `^[A-Za-z_][A-Za-z0-9_]*$`
	maxEnvName     = 128
)

// EnvNameClass is one kind of environment variable no task may set: a
// tenant's input reaches an agent image the platform may have chosen, with
// the platform's credentials, so a name that changes how that image loads
// code, trusts peers or where it sends requests is an attack on it.
type EnvNameClass struct {
	// Class names the kind, Why says what such a variable changes.
	Class, Why string
	// Prefixes are refused with any suffix; Names exactly (both compared
	// in upper case).
	Prefixes, Names []string
}

// RefusedEnvNames are the names no input key, env name or envFrom key may
// make, by class. The CRDs' CEL rules carry the pattern built from them
// (TestRefusedEnvNamesMatchTheCRD) and the README lists them
// (TestRefusedEnvNamesDocumented).
var RefusedEnvNames = []EnvNameClass{
	{"loader", "loads libraries or code into every process",
		[]string{"LD_", "DYLD_", "MALLOC_", "BASH_FUNC_"},
		[]string{"GLIBC_TUNABLES", "GCONV_PATH", "NLSPATH", "LOCPATH", "PATH"}},
	{"shell", "runs commands when a shell or tool starts",
		nil,
		[]string{"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "IFS", "PROMPT_COMMAND", "ZDOTDIR", "SSH_ASKPASS"}},
	{"runtime hook", "loads code into a language runtime or build tool",
		[]string{"DOTNET_", "CORECLR_", "COR_", "COMPLUS_", "GIT_"},
		[]string{"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONWARNINGS", "PYTHONBREAKPOINT", "PYTHONUSERBASE",
			"PERL5LIB", "PERL5OPT", "PERL5DB", "PERLLIB", "RUBYLIB", "RUBYOPT", "NODE_OPTIONS", "NODE_PATH", "NODE_REPL_EXTERNAL_MODULE",
			"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "JAVA_OPTS", "MAVEN_OPTS", "GRADLE_OPTS", "SBT_OPTS", "CATALINA_OPTS",
			"CLASSPATH", "GODEBUG", "GOFLAGS"}},
	{"name resolution", "changes how host names resolve",
		nil,
		[]string{"HOSTALIASES", "LOCALDOMAIN", "RES_OPTIONS", "RESOLV_HOST_CONF"}},
	{"proxy", "routes traffic through another host",
		nil,
		[]string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "FTP_PROXY", "GRPC_PROXY", "SOCKS_PROXY", "SOCKS5_PROXY"}},
	{"TLS trust", "changes which certificates are trusted, or turns checks off",
		[]string{"OPENSSL_"},
		[]string{"SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "NODE_TLS_REJECT_UNAUTHORIZED",
			"PYTHONHTTPSVERIFY", "AWS_CA_BUNDLE", "PIP_CERT", "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH", "VAULT_CACERT", "VAULT_CAPATH", "VAULT_SKIP_VERIFY"}},
	{"key log", "writes TLS session keys where others can read them",
		nil,
		[]string{"SSLKEYLOGFILE"}},
	{"endpoint override", "sends the agent's requests, and its credentials, to another server",
		[]string{"AWS_ENDPOINT_URL", "OTEL_EXPORTER_", "NPM_CONFIG_"},
		[]string{"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_EC2_METADATA_SERVICE_ENDPOINT",
			"OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "AZURE_OPENAI_ENDPOINT", "OLLAMA_HOST", "HF_ENDPOINT",
			"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX",
			"GOPROXY", "GOSUMDB", "GONOSUMDB", "GOINSECURE", "DOCKER_HOST", "KUBECONFIG", "VAULT_ADDR"}},
	{"GPU visibility", "exposes devices the pod was not given",
		[]string{"NVIDIA_"},
		[]string{"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "HABANA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"}},
	{"cluster", "impersonates the Kubernetes service environment",
		[]string{"KUBERNETES_"}, nil},
}

// maxPatternSize bounds each refused-names pattern: the API server's CEL
// cost estimate grows with a pattern's length, and a Workflow holds 50
// steps of 20 env names each.
const maxPatternSize = 600

// refusedEnvNamePatterns match, in upper case, every name RefusedEnvNames
// refuses: the prefixes, then the names in patterns of at most
// maxPatternSize characters, one CEL rule each.
var refusedEnvNamePatterns = func() []string {
	var prefixes, names []string
	for _, c := range RefusedEnvNames {
		prefixes = append(prefixes, c.Prefixes...)
		names = append(names, c.Names...)
	}
	out := []string{"^(" + strings.Join(prefixes, "|") + ")"}
	var chunk []string
	for _, n := range names {
		if len(chunk) > 0 && len("^()$")+len(strings.Join(append(chunk, n), "|")) > maxPatternSize {
			out, chunk = append(out, "^("+strings.Join(chunk, "|")+")$"), nil
		}
		chunk = append(chunk, n)
	}
	return append(out, "^("+strings.Join(chunk, "|")+")$")
}()

var (
	envNameRE         = regexp.MustCompile(envNamePattern)
	refusedEnvNameREs = func() []*regexp.Regexp {
		out := make([]*regexp.Regexp, 0, len(refusedEnvNamePatterns))
		for _, p := range refusedEnvNamePatterns {
			out = append(out, regexp.MustCompile(p))
		}
		return out
	}()
)

// envNameProblem says why name may not be an agent's environment variable
// by the rules of input keys; empty when it may.
func envNameProblem(name string) string {
	switch {
	case len(name) > maxEnvName || !envNameRE.MatchString(name):
		return fmt.Sprintf("is not an environment variable name (letters, digits and '_', not starting with a digit, at most %d characters)", maxEnvName)
	case slices.ContainsFunc(refusedEnvNameREs, func(re *regexp.Regexp) bool { return re.MatchString(upperASCII(name)) }):
		return "is refused: " + refusedWhy
	}
	return ""
}

// refusedWhy is the CRDs' message for a refused name, after "is refused: ".
const refusedWhy = "it changes how the agent loads code, resolves names, trusts certificates, routes traffic or which devices it sees"

// upperASCII is CEL's upperAscii: only ASCII letters change.
func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
