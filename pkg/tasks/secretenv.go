package tasks

import (
	"context"
	"fmt"
	"maps"
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

// SecretKeys are the key names of the Secrets a task's env and envFrom
// read, by Secret name, as checkSecretKeys found them.
type SecretKeys map[string][]string

// secretEnvFrom expands the task's envFrom into one secretKeyRef per key
// that keys says the Secret had when it was checked, in the order given
// and each Secret's keys sorted; where two make the same name the later
// wins, as the kubelet's envFrom would. A key added to the Secret later
// never reaches the agent.
func secretEnvFrom(from []v1alpha1.SecretEnvFromSource, keys SecretKeys) []corev1.EnvVar {
	var out []corev1.EnvVar
	at := map[string]int{}
	for _, f := range from {
		for _, key := range keys[f.SecretRef.Name] {
			v := corev1.EnvVar{Name: f.Prefix + key, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: f.SecretRef.Name}, Key: key, Optional: ptr.To(false)}}}
			if i, ok := at[v.Name]; ok {
				out[i] = v
				continue
			}
			at[v.Name] = len(out)
			out = append(out, v)
		}
	}
	return out
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
// kept, never a value, and returned for the Job's env; err is a failed
// read, to retry.
func (r *Reconciler) checkSecretKeys(ctx context.Context, task *v1alpha1.AgentTask) (SecretKeys, *referenceProblem, error) {
	if len(task.Spec.Env) == 0 && len(task.Spec.EnvFrom) == 0 {
		return nil, nil, nil
	}
	keysOf := SecretKeys{}
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
			return nil, problem, err
		}
		if !slices.Contains(ks, sel.Key) {
			return nil, &referenceProblem{Reason: ReasonSecretKeyNotFound, Wait: true, Kind: "Secret",
				Message: fmt.Sprintf("%s.key: Secret %s/%s has no key %q", field, task.Namespace, sel.Name, sel.Key)}, nil
		}
	}
	taken := takenEnvNames(task)
	for i, f := range task.Spec.EnvFrom {
		field := fmt.Sprintf("spec.envFrom[%d]", i)
		ks, problem, err := keys(tenancy.Ref{Field: field + ".secretRef.name", Kind: "Secret", Name: f.SecretRef.Name})
		if problem != nil || err != nil {
			return nil, problem, err
		}
		if msg := envFromProblem(field, task.Namespace+"/"+f.SecretRef.Name, f.Prefix, ks, taken); msg != "" {
			return nil, &referenceProblem{Reason: ReasonSecretKeyRefused, Wait: true, Kind: "Secret", Message: msg}, nil
		}
	}
	if msg := envFromCountProblem(task.Spec.EnvFrom, keysOf); msg != "" {
		return nil, &referenceProblem{Reason: ReasonSecretKeyRefused, Wait: true, Kind: "Secret", Message: msg}, nil
	}
	return keysOf, nil, nil
}

// maxEnvFromVars bounds the variables envFrom may make: each becomes a
// secretKeyRef in the Job, and a Secret holds up to 1 MiB of keys.
const maxEnvFromVars = 256

// envFromCountProblem says why the Secrets of from, with their checked
// keys, make too many variables; "" when they do not.
func envFromCountProblem(from []v1alpha1.SecretEnvFromSource, keys SecretKeys) string {
	n := 0
	for _, f := range from {
		n += len(keys[f.SecretRef.Name])
	}
	if n <= maxEnvFromVars {
		return ""
	}
	return fmt.Sprintf("spec.envFrom: its Secrets make %d environment variables, more than the %d a task may read this way: use env for the keys the agent needs",
		n, maxEnvFromVars)
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
