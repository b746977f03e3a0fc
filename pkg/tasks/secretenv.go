package tasks

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/tenancy"
)

// secretEnv are the task's env entries read from Secret keys, in the
// order given. The kubelet reads the values; a missing key keeps the
// container from starting (Optional false), it is never left out.
func secretEnv(env []v1alpha1.SecretEnvVar) []corev1.EnvVar {
	if len(env) == 0 {
		return nil
	}
	out := make([]corev1.EnvVar, 0, len(env))
	for _, e := range env {
		ref := e.ValueFrom.SecretKeyRef
		out = append(out, corev1.EnvVar{Name: e.Name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}, Key: ref.Key, Optional: ptr.To(false)}}})
	}
	return out
}

// secretEnvFrom are the task's whole Secrets as environment, in the order
// given (of two Secrets with the same key, the kubelet takes the later).
func secretEnvFrom(from []v1alpha1.SecretEnvFromSource) []corev1.EnvFromSource {
	if len(from) == 0 {
		return nil
	}
	out := make([]corev1.EnvFromSource, 0, len(from))
	for _, f := range from {
		out = append(out, corev1.EnvFromSource{Prefix: f.Prefix, SecretRef: &corev1.SecretEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: f.SecretRef.Name}, Optional: ptr.To(false)}})
	}
	return out
}

// envNamePattern and maxEnvName are the rule of input keys (TaskInput's
// CEL rules), which env names and the names envFrom makes follow too.
const (
	envNamePattern = `^[A-Za-z_][A-Za-z0-9_]*$`
	maxEnvName     = 128
)

// refusedEnvNamePattern matches, in upper case, the names TaskInput's CEL
// rule refuses: they change how the agent loads code, resolves names,
// trusts certificates or routes traffic. TestRefusedEnvNamesMatchTheCRD
// keeps it equal to the CRD's.
const refusedEnvNamePattern = `^(LD_|DYLD_|BASH_FUNC_|KUBERNETES_|MALLOC_)|^(GLIBC_TUNABLES|(HTTPS?|ALL|NO|FTP|GRPC)_PROXY|SSL_CERT_(FILE|DIR)|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|NODE_EXTRA_CA_CERTS|NODE_TLS_REJECT_UNAUTHORIZED|PYTHONHTTPSVERIFY|HOSTALIASES|LOCALDOMAIN|RES_OPTIONS|RESOLV_HOST_CONF|PATH|PYTHON(PATH|HOME|STARTUP)|PERL5LIB|PERL5OPT|PERLLIB|RUBYLIB|RUBYOPT|NODE_(OPTIONS|PATH)|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|CLASSPATH|GODEBUG|GCONV_PATH|NLSPATH|LOCPATH|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|IFS)$`

var (
	envNameRE        = regexp.MustCompile(envNamePattern)
	refusedEnvNameRE = regexp.MustCompile(refusedEnvNamePattern)
)

// envNameProblem says why name may not be an agent's environment variable
// by the rules of input keys; empty when it may.
func envNameProblem(name string) string {
	switch {
	case len(name) > maxEnvName || !envNameRE.MatchString(name):
		return fmt.Sprintf("is not an environment variable name (letters, digits and '_', not starting with a digit, at most %d characters)", maxEnvName)
	case refusedEnvNameRE.MatchString(upperASCII(name)):
		return "is refused: it changes how the agent loads code, resolves names, trusts certificates or routes traffic"
	}
	return ""
}

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

// takenEnvNames are the names the task's input and env set, each with the
// field that sets it.
func takenEnvNames(task *v1alpha1.AgentTask) map[string]string {
	taken := make(map[string]string, len(task.Spec.Input)+len(task.Spec.Env))
	for name := range task.Spec.Input {
		taken[name] = "spec.input"
	}
	for i, e := range task.Spec.Env {
		taken[e.Name] = fmt.Sprintf("spec.env[%d]", i)
	}
	return taken
}

// envFromProblem says why the Secret secret (namespace/name), whose key
// names are keys, cannot be read through the envFrom entry at field with
// prefix: the first key, in sorted order, whose name prefix+key breaks the
// rules of input keys or is set by the input or env (taken) already. Empty
// when all can. Only key names are read, never values.
func envFromProblem(field, secret, prefix string, keys []string, taken map[string]string) string {
	for _, key := range slices.Sorted(slices.Values(keys)) {
		name := prefix + key
		why := envNameProblem(name)
		if by, ok := taken[name]; ok && why == "" {
			why = "is set by " + by + " already"
		}
		if why != "" {
			return fmt.Sprintf("%s: key %q of Secret %s makes the environment variable %q, which %s", field, key, secret, name, why)
		}
	}
	return ""
}

// checkSecretKeys reads each Secret that the task's env and envFrom name
// once, uncached, after checkReferences found them all present and
// allowed, and returns the first problem: a key env names that the Secret
// lacks (SecretKeyNotFound), or a key envFrom would make an environment
// variable the rules of input keys refuse (SecretKeyRefused). Both keep the
// task Pending: the Secret can be fixed. Only the Secrets' key names are
// kept, never a value; err is a failed read, to retry.
func (r *Reconciler) checkSecretKeys(ctx context.Context, task *v1alpha1.AgentTask) (*referenceProblem, error) {
	if len(task.Spec.Env) == 0 && len(task.Spec.EnvFrom) == 0 {
		return nil, nil
	}
	keysOf := map[string][]string{}
	keys := func(ref tenancy.Ref) ([]string, *referenceProblem, error) {
		if ks, ok := keysOf[ref.Name]; ok {
			return ks, nil, nil
		}
		ks, problem, err := r.secretKeys(ctx, task, ref)
		if problem == nil && err == nil {
			keysOf[ref.Name] = ks
		}
		return ks, problem, err
	}
	for i, e := range task.Spec.Env {
		sel := e.ValueFrom.SecretKeyRef
		field := fmt.Sprintf("spec.env[%d].valueFrom.secretKeyRef", i)
		ks, problem, err := keys(tenancy.Ref{Field: field + ".name", Kind: "Secret", Name: sel.Name})
		if problem != nil || err != nil {
			return problem, err
		}
		if !slices.Contains(ks, sel.Key) {
			return &referenceProblem{Reason: ReasonSecretKeyNotFound, Wait: true, Kind: "Secret",
				Message: fmt.Sprintf("%s.key: Secret %s/%s has no key %q", field, task.Namespace, sel.Name, sel.Key)}, nil
		}
	}
	taken := takenEnvNames(task)
	for i, f := range task.Spec.EnvFrom {
		field := fmt.Sprintf("spec.envFrom[%d]", i)
		ks, problem, err := keys(tenancy.Ref{Field: field + ".secretRef.name", Kind: "Secret", Name: f.SecretRef.Name})
		if problem != nil || err != nil {
			return problem, err
		}
		if msg := envFromProblem(field, task.Namespace+"/"+f.SecretRef.Name, f.Prefix, ks, taken); msg != "" {
			return &referenceProblem{Reason: ReasonSecretKeyRefused, Wait: true, Kind: "Secret", Message: msg}, nil
		}
	}
	return nil, nil
}

// secretKeys reads the Secret ref names and returns its key names, sorted.
// The Secret may have changed since checkReferences read its metadata, so
// it is checked again: gone, it is waited for; no longer labelled for the
// user, the task fails. The values are cleared as soon as the names are
// taken and never leave this function.
func (r *Reconciler) secretKeys(ctx context.Context, task *v1alpha1.AgentTask, ref tenancy.Ref) ([]string, *referenceProblem, error) {
	secret := &corev1.Secret{}
	err := r.apiReader.Get(ctx, types.NamespacedName{Namespace: task.Namespace, Name: ref.Name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		return nil, missing(ref, task.Namespace), nil
	case err != nil:
		return nil, nil, errorf(errAPIRead, "get Secret %s/%s: %w", task.Namespace, ref.Name, err)
	}
	keys := slices.Sorted(maps.Keys(secret.Data))
	clear(secret.Data)
	if err := tenancy.CheckUse(ref, task.Namespace, secret, task.Spec.UserID); err != nil {
		return nil, notAllowed(err), nil
	}
	return keys, nil, nil
}
