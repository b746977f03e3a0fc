package workflows_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/testkit"
)

// TestStepSecretEnv: a step's env and envFrom (Secret names and keys, never
// values) are its AgentTask's, as written; the tasks manager checks the
// Secrets when it runs the task.
func TestStepSecretEnv(t *testing.T) {
	k := newCluster(t)
	startManager(t, k.ns)
	env := []v1alpha1.SecretEnvVar{
		{Name: "API_KEY", ValueFrom: v1alpha1.SecretEnvSource{SecretKeyRef: v1alpha1.SecretKeyReference{Name: "llm", Key: "api-key"}}},
		{Name: "ORG", ValueFrom: v1alpha1.SecretEnvSource{SecretKeyRef: v1alpha1.SecretKeyReference{Name: "llm", Key: "org"}}},
	}
	from := []v1alpha1.SecretEnvFromSource{{Prefix: "GH_", SecretRef: v1alpha1.SecretNameReference{Name: "github"}}}
	first, second := testkit.MakeStep("first"), testkit.MakeStep("second").DependsOn("first")
	first.Env = env
	second.Env, second.EnvFrom = env[:1], from
	k.create(testkit.MakeWorkflow("secret-env", k.ns).Step(first, second).Obj())

	task := k.waitTask("secret-env", "first", 0)
	assert.Equal(t, env, task.Spec.Env)
	assert.Empty(t, task.Spec.EnvFrom)
	k.finish(task, v1alpha1.TaskSucceeded, nil)

	task = k.waitTask("secret-env", "second", 0)
	assert.Equal(t, env[:1], task.Spec.Env)
	assert.Equal(t, from, task.Spec.EnvFrom)
}
