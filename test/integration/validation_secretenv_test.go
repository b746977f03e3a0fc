package integration

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	schedulerv1alpha1 "opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

// secretEnvVar reads the environment variable name from key of Secret secret.
func secretEnvVar(name, secret, key string) schedulerv1alpha1.SecretEnvVar {
	return schedulerv1alpha1.SecretEnvVar{Name: name, ValueFrom: schedulerv1alpha1.SecretEnvSource{
		SecretKeyRef: schedulerv1alpha1.SecretKeyReference{Name: secret, Key: key}}}
}

// secretEnvFrom reads every key of Secret secret, after prefix.
func secretEnvFrom(prefix, secret string) schedulerv1alpha1.SecretEnvFromSource {
	return schedulerv1alpha1.SecretEnvFromSource{Prefix: prefix, SecretRef: schedulerv1alpha1.SecretNameReference{Name: secret}}
}

// withEnv is a valid AgentTask with env and envFrom.
func withEnv(env []schedulerv1alpha1.SecretEnvVar, from ...schedulerv1alpha1.SecretEnvFromSource) objectFactory {
	return newAgentTask(func(a *agentTask) { a.Spec.Env, a.Spec.EnvFrom = env, from })
}

// withoutField is base's object sent without the field at path, whose
// elements are map keys (string) and list indexes (int): the typed structs
// cannot leave out a required field inside a list (unset can only name maps).
func withoutField(base objectFactory, path ...any) objectFactory {
	return func(ns, name string) runtime.Object {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(base(ns, name))
		if err != nil {
			panic(err)
		}
		var node any = content
		for i, step := range path {
			last := i == len(path)-1
			switch key := step.(type) {
			case string:
				m := node.(map[string]any)
				if last {
					if _, ok := m[key]; !ok {
						panic(fmt.Sprintf("%v is not set in the base object", path))
					}
					delete(m, key)
				}
				node = m[key]
			case int:
				node = node.([]any)[key]
			}
		}
		return &unstructured.Unstructured{Object: content}
	}
}

// invalidSecretEnvCases break one rule of env and envFrom each, on an
// AgentTask and on a Workflow step.
func invalidSecretEnvCases() []invalidCase {
	llm := secretEnvVar("API_KEY", "llm", "api-key")
	cases := []invalidCase{
		{
			name:  "agenttask env name not an env name",
			obj:   withEnv([]schedulerv1alpha1.SecretEnvVar{secretEnvVar("api-key", "llm", "api-key")}),
			field: "spec.env[0].name", msg: "should match '^[A-Za-z_][A-Za-z0-9_]*$'",
		},
		{
			name:  "agenttask env name starting with a digit",
			obj:   withEnv([]schedulerv1alpha1.SecretEnvVar{llm, secretEnvVar("1PASSWORD", "llm", "org")}),
			field: "spec.env[1].name", msg: "should match '^[A-Za-z_][A-Za-z0-9_]*$'",
		},
		{
			name:  "agenttask env name too long",
			obj:   withEnv([]schedulerv1alpha1.SecretEnvVar{secretEnvVar(strings.Repeat("A", 129), "llm", "api-key")}),
			field: "spec.env[0].name", msg: "may not be more than 128",
		},
		{
			name:  "agenttask env name repeating an input key",
			obj:   withEnv([]schedulerv1alpha1.SecretEnvVar{llm, secretEnvVar("PROMPT", "llm", "prompt")}),
			field: "spec.env", msg: "spec.env names must not repeat an input key",
		},
		{
			name:  "agenttask env name twice",
			obj:   withEnv([]schedulerv1alpha1.SecretEnvVar{llm, secretEnvVar("API_KEY", "other", "api-key")}),
			field: "spec.env[1]", msg: "Duplicate value",
		},
		{
			name:  "agenttask env without a name",
			obj:   withoutField(withEnv([]schedulerv1alpha1.SecretEnvVar{llm}), "spec", "env", 0, "name"),
			field: "spec.env[0].name", msg: "Required value",
		},
		{
			name:  "agenttask env without valueFrom",
			obj:   withoutField(withEnv([]schedulerv1alpha1.SecretEnvVar{llm}), "spec", "env", 0, "valueFrom"),
			field: "spec.env[0].valueFrom", msg: "Required value",
		},
		{
			name:  "agenttask env without valueFrom.secretKeyRef",
			obj:   withoutField(withEnv([]schedulerv1alpha1.SecretEnvVar{llm}), "spec", "env", 0, "valueFrom", "secretKeyRef"),
			field: "spec.env[0].valueFrom.secretKeyRef", msg: "Required value",
		},
		{
			name:  "agenttask env secretKeyRef without a name",
			obj:   withoutField(withEnv([]schedulerv1alpha1.SecretEnvVar{llm}), "spec", "env", 0, "valueFrom", "secretKeyRef", "name"),
			field: "spec.env[0].valueFrom.secretKeyRef.name", msg: "Required value",
		},
		{
			name:  "agenttask env secretKeyRef without a key",
			obj:   withoutField(withEnv([]schedulerv1alpha1.SecretEnvVar{llm}), "spec", "env", 0, "valueFrom", "secretKeyRef", "key"),
			field: "spec.env[0].valueFrom.secretKeyRef.key", msg: "Required value",
		},
		{
			name:  "agenttask env secretKeyRef with an empty name",
			obj:   withEnv([]schedulerv1alpha1.SecretEnvVar{secretEnvVar("API_KEY", "", "api-key")}),
			field: "spec.env[0].valueFrom.secretKeyRef.name", msg: "should be at least 1 chars long",
		},
		{
			name:  "agenttask env secretKeyRef name not a Secret name",
			obj:   withEnv([]schedulerv1alpha1.SecretEnvVar{secretEnvVar("API_KEY", "LLM_keys", "api-key")}),
			field: "spec.env[0].valueFrom.secretKeyRef.name", msg: "should match",
		},
		{
			name:  "agenttask env secretKeyRef key with a slash",
			obj:   withEnv([]schedulerv1alpha1.SecretEnvVar{secretEnvVar("API_KEY", "llm", "keys/api")}),
			field: "spec.env[0].valueFrom.secretKeyRef.key", msg: "should match",
		},
		{
			name:  "agenttask env of too many entries",
			obj:   withEnv(manySecretEnv(21)),
			field: "spec.env", msg: "must have at most 20 items",
		},
		{
			name:  "agenttask envFrom prefix not an env name",
			obj:   withEnv(nil, secretEnvFrom("gh-", "github")),
			field: "spec.envFrom[0].prefix", msg: "should match '^[A-Za-z_][A-Za-z0-9_]*$'",
		},
		{
			name:  "agenttask envFrom prefix too long",
			obj:   withEnv(nil, secretEnvFrom(strings.Repeat("P", 65), "github")),
			field: "spec.envFrom[0].prefix", msg: "may not be more than 64",
		},
		{
			name:  "agenttask envFrom without secretRef",
			obj:   withoutField(withEnv(nil, secretEnvFrom("GH_", "github")), "spec", "envFrom", 0, "secretRef"),
			field: "spec.envFrom[0].secretRef", msg: "Required value",
		},
		{
			name:  "agenttask envFrom secretRef without a name",
			obj:   withoutField(withEnv(nil, secretEnvFrom("", "a"), secretEnvFrom("GH_", "github")), "spec", "envFrom", 1, "secretRef", "name"),
			field: "spec.envFrom[1].secretRef.name", msg: "Required value",
		},
		{
			name:  "agenttask envFrom secretRef name not a Secret name",
			obj:   withEnv(nil, secretEnvFrom("", "GitHub")),
			field: "spec.envFrom[0].secretRef.name", msg: "should match",
		},
		{
			name:  "agenttask envFrom of too many Secrets",
			obj:   withEnv(nil, manySecretEnvFrom(17)...),
			field: "spec.envFrom", msg: "must have at most 16 items",
		},
		{
			name: "workflow step env name refused",
			obj: newWorkflow(func(w *workflow) {
				w.Spec.Steps[1].Env = []schedulerv1alpha1.SecretEnvVar{llm, secretEnvVar("NODE_OPTIONS", "llm", "opts")}
			}),
			field: "spec.steps[1].env[1].name", msg: "env name NODE_OPTIONS is refused: it changes how the agent loads code",
		},
		{
			name: "workflow step env name repeating the step's input key",
			obj: newWorkflow(func(w *workflow) {
				w.Spec.Steps[0].Env = []schedulerv1alpha1.SecretEnvVar{secretEnvVar("URL", "llm", "url")}
			}),
			field: "spec.steps[0].env", msg: "env names must not repeat an input key",
		},
		{
			name:  "workflow step env secretKeyRef without a key",
			obj:   withoutField(newWorkflow(func(w *workflow) { w.Spec.Steps[2].Env = []schedulerv1alpha1.SecretEnvVar{llm} }), "spec", "steps", 2, "env", 0, "valueFrom", "secretKeyRef", "key"),
			field: "spec.steps[2].env[0].valueFrom.secretKeyRef.key", msg: "Required value",
		},
	}
	// Every refused input key is refused as an env name too, in any letter case.
	for _, key := range reservedInputKeys {
		if !envName.MatchString(key) {
			continue
		}
		cases = append(cases, invalidCase{
			name:  "agenttask env name " + key,
			obj:   withEnv([]schedulerv1alpha1.SecretEnvVar{secretEnvVar(key, "llm", "api-key")}),
			field: "spec.env[0].name", msg: "env name " + key + " is refused: it changes how the agent loads code",
		})
	}
	return cases
}

func manySecretEnv(n int) []schedulerv1alpha1.SecretEnvVar {
	var out []schedulerv1alpha1.SecretEnvVar
	for i := range n {
		out = append(out, secretEnvVar(fmt.Sprintf("K%d", i), "llm", fmt.Sprintf("k%d", i)))
	}
	return out
}

func manySecretEnvFrom(n int) []schedulerv1alpha1.SecretEnvFromSource {
	var out []schedulerv1alpha1.SecretEnvFromSource
	for i := range n {
		out = append(out, secretEnvFrom(fmt.Sprintf("P%d_", i), fmt.Sprintf("s%d", i)))
	}
	return out
}

// validSecretEnvCases are valid env and envFrom at the edge of their rules.
func validSecretEnvCases() []validCase {
	var lookalikes []schedulerv1alpha1.SecretEnvVar
	for _, key := range allowedInputKeys {
		lookalikes = append(lookalikes, secretEnvVar(key, "llm", strings.ToLower(key)))
	}
	return []validCase{
		{name: "agenttask env names that only look reserved", obj: withEnv(lookalikes)},
		{name: "agenttask env of 20 entries and envFrom of 16 Secrets", obj: withEnv(manySecretEnv(20), manySecretEnvFrom(16)...)},
		{
			name: "agenttask env name of 128 characters, key and names at their patterns' edges",
			obj: withEnv([]schedulerv1alpha1.SecretEnvVar{
				secretEnvVar(strings.Repeat("A", 128), "llm.keys-1", "_.-Key9"),
				secretEnvVar("_", "l", "k"),
			}, secretEnvFrom(strings.Repeat("P", 64), "github"), secretEnvFrom("", "github")),
		},
		{
			name: "workflow steps with env and envFrom",
			obj: newWorkflow(func(w *workflow) {
				for i := range w.Spec.Steps {
					w.Spec.Steps[i].Env = manySecretEnv(20)
					w.Spec.Steps[i].EnvFrom = manySecretEnvFrom(16)
				}
			}),
		},
	}
}
