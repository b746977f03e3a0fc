package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	ossav1 "opsnorth.io/scheduler/apis/ossa/v1"
	ossaac "opsnorth.io/scheduler/generated/applyconfiguration/ossa/v1"
	ossainformers "opsnorth.io/scheduler/generated/informers/externalversions"
	"opsnorth.io/scheduler/pkg/testenv"
)

var agentsResource = ossav1.SchemeGroupVersion.WithResource("agents")

// validAgent is an OSSA 1.0 agent using most of the schema: an HTTP agent
// with a health check, two capabilities (one schema inline, one by URI), a
// dependency and policies.
func validAgent(namespace, name string) *ossav1.Agent {
	return &ossav1.Agent{
		TypeMeta:   metav1.TypeMeta{APIVersion: ossav1.SchemeGroupVersion.String(), Kind: "Agent"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: ossav1.AgentSpec{
			OSSAVersion: "1.0",
			Agent: ossav1.AgentDefinition{
				ID: "code-reviewer", Name: "Code reviewer", Version: "1.4.0-rc.1+build.7",
				Description: "Reviews pull requests", Role: "development", Tags: []string{"code", "review"},
				Runtime: ossav1.AgentRuntime{
					Type: ossav1.RuntimeK8s, Image: "ghcr.io/opsnorth/agents/reviewer:1.4.0", Command: []string{"/agent", "serve"},
					Resources:   &ossav1.RuntimeResources{CPU: quantity("500m"), Memory: quantity("512Mi")},
					HealthCheck: &ossav1.HealthCheck{Type: "http", Endpoint: "/health", Port: ptr.To[int32](8080)},
				},
				Capabilities: []ossav1.Capability{
					{Name: "review_diff", Description: "Reviews a diff",
						InputSchema:  raw(map[string]any{"type": "object", "properties": map[string]any{"diff": map[string]any{"type": "string"}}}),
						OutputSchema: raw(map[string]any{"type": "object"})},
					{Name: "summarize", Description: "Summarizes a change",
						InputSchema: raw("https://schemas.example.com/summarize-in.json"), OutputSchema: raw("https://schemas.example.com/summarize-out.json")},
				},
				Policies:     &ossav1.Policies{Compliance: []ossav1.ComplianceFramework{"soc2-type2"}, Encryption: ptr.To(true), PIIHandling: "anonymize"},
				Integration:  &ossav1.Integration{Protocol: "http", Auth: &ossav1.Auth{Type: "jwt", Config: map[string]string{"issuer": "https://id.example.com"}}},
				Dependencies: &ossav1.Dependencies{Required: []ossav1.RequiredDependency{{AgentID: "git-reader", MinVersion: "1.0.0", MaxVersion: "1.99.0"}}},
			},
			Replicas:    ptr.To[int32](2),
			Autoscaling: &ossav1.AgentAutoscaling{MinReplicas: 2, MaxReplicas: 6, TargetCPUUtilizationPercentage: ptr.To[int32](70)},
		},
	}
}

func raw(v any) runtime.RawExtension {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return runtime.RawExtension{Raw: data}
}

// TestAgentValidation: the Agent CRD refuses what OSSA 1.0 and our
// extension fields forbid, naming the field, and accepts the schema's
// edges; what it stores keeps capability schemas as given.
func TestAgentValidation(t *testing.T) {
	env := testenv.Require(t)
	dc := newDynamicClient(t, env.Config)
	ensureNamespace(t, env.Config, validationNamespace)
	agents := dc.Resource(agentsResource).Namespace(validationNamespace)
	agent := func(mutate func(*ossav1.Agent)) func(name string) *unstructured.Unstructured {
		return func(name string) *unstructured.Unstructured {
			a := validAgent(validationNamespace, name)
			mutate(a)
			return toUnstructured(t, a)
		}
	}
	for i, tc := range []struct {
		name, field, msg string
		obj              func(name string) *unstructured.Unstructured
	}{
		{"ossaVersion other than 1.0", "spec.ossaVersion", `Unsupported value: "2.0"`,
			agent(func(a *ossav1.Agent) { a.Spec.OSSAVersion = "2.0" })},
		{"id not a DNS label", "spec.agent.id", "should match",
			agent(func(a *ossav1.Agent) { a.Spec.Agent.ID = "Code_Reviewer" })},
		{"version not semver", "spec.agent.version", "should match",
			agent(func(a *ossav1.Agent) { a.Spec.Agent.Version = "1.4" })},
		{"role outside the schema's enum", "spec.agent.role", `Unsupported value: "assistant"`,
			agent(func(a *ossav1.Agent) { a.Spec.Agent.Role = "assistant" })},
		{"runtime type outside the enum", "spec.agent.runtime.type", `Unsupported value: "vm"`,
			agent(func(a *ossav1.Agent) { a.Spec.Agent.Runtime.Type = "vm" })},
		{"no capability", "spec.agent.capabilities", "should have at least 1 items",
			agent(func(a *ossav1.Agent) { a.Spec.Agent.Capabilities = []ossav1.Capability{} })},
		{"two capabilities of one name", "spec.agent.capabilities[1]", "Duplicate value",
			agent(func(a *ossav1.Agent) { a.Spec.Agent.Capabilities[1].Name = "review_diff" })},
		{"docker runtime without an image", "spec.agent.runtime.image", "image is required for runtime type docker or k8s",
			agent(func(a *ossav1.Agent) {
				a.Spec.Agent.Runtime.Type, a.Spec.Agent.Runtime.Image = ossav1.RuntimeDocker, ""
			})},
		{"exec health check without a command", "spec.agent.runtime.health_check.command", "command is required for an exec health check",
			agent(func(a *ossav1.Agent) { a.Spec.Agent.Runtime.HealthCheck = &ossav1.HealthCheck{Type: "exec"} })},
		{"compliance without encryption", "spec.agent.policies.encryption", "encryption must be true when compliance frameworks are set",
			agent(func(a *ossav1.Agent) { a.Spec.Agent.Policies.Encryption = ptr.To(false) })},
		{"compliance framework outside the enum", "spec.agent.policies.compliance[0]", `Unsupported value: "soc3"`,
			agent(func(a *ossav1.Agent) { a.Spec.Agent.Policies.Compliance = []ossav1.ComplianceFramework{"soc3"} })},
		{"a dependency on itself", "spec.agent.dependencies.required", "an agent cannot depend on itself",
			agent(func(a *ossav1.Agent) { a.Spec.Agent.Dependencies.Required[0].AgentID = "code-reviewer" })},
		{"min_version not semver", "spec.agent.dependencies.required[0].min_version", "should match",
			agent(func(a *ossav1.Agent) { a.Spec.Agent.Dependencies.Required[0].MinVersion = "v1" })},
		{"replicas above 100", "spec.replicas", "should be less than or equal to 100",
			agent(func(a *ossav1.Agent) { a.Spec.Replicas = ptr.To[int32](101) })},
		{"autoscaling without a target", "spec.autoscaling", "set targetCPUUtilizationPercentage, targetMemoryUtilizationPercentage or both",
			agent(func(a *ossav1.Agent) { a.Spec.Autoscaling.TargetCPUUtilizationPercentage = nil })},
		{"autoscaling min above max", "spec.autoscaling", "minReplicas must not exceed maxReplicas",
			agent(func(a *ossav1.Agent) { a.Spec.Autoscaling.MinReplicas = 7 })},
		// A rule on the root cannot point its fieldPath into metadata: the
		// API server names no field (<nil>), the message names metadata.name.
		{"name starting with a digit", "<nil>", "metadata.name must be a DNS label of at most 63 characters",
			agent(func(a *ossav1.Agent) { a.Name = "7-" + a.Name })},
		{"name longer than a Service name", "<nil>", "metadata.name must be a DNS label of at most 63 characters",
			agent(func(a *ossav1.Agent) { a.Name = (a.Name + strings.Repeat("x", 64))[:70] })},
		{"CPU autoscaling without requested CPU", "spec.autoscaling.targetCPUUtilizationPercentage", "autoscaling on CPU needs agent.runtime.resources.cpu",
			agent(func(a *ossav1.Agent) { a.Spec.Agent.Runtime.Resources.CPU = nil })},
		{"memory autoscaling without requested memory", "spec.autoscaling.targetMemoryUtilizationPercentage", "autoscaling on memory needs agent.runtime.resources.memory",
			agent(func(a *ossav1.Agent) {
				a.Spec.Autoscaling.TargetMemoryUtilizationPercentage = ptr.To[int32](80)
				a.Spec.Agent.Runtime.Resources.Memory = nil
			})},
		{"autoscaling a serverless agent", "spec.autoscaling", "autoscaling needs a runtime type that runs in the cluster",
			agent(func(a *ossav1.Agent) { a.Spec.Agent.Runtime.Type = ossav1.RuntimeServerless })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.obj(uniqueName(fmt.Sprintf("agent-invalid-%02d", i)))
			_, err := agents.Create(t.Context(), u, metav1.CreateOptions{})
			if err == nil {
				deleteOnCleanup(t, agents, u.GetName())
			}
			requireInvalid(t, err, tc.field, tc.msg)
		})
	}

	t.Run("stored as given, with OSSA's defaults", func(t *testing.T) {
		a := validAgent(validationNamespace, uniqueName("agent-valid"))
		a.Spec.Replicas, a.Spec.Autoscaling = nil, nil
		created, err := agents.Create(t.Context(), toUnstructured(t, a), metav1.CreateOptions{})
		require.NoError(t, err)
		deleteOnCleanup(t, agents, created.GetName())
		got := &ossav1.Agent{}
		fromUnstructured(t, created, got)
		assert.Equal(t, ptr.To[int32](1), got.Spec.Replicas)
		hc := got.Spec.Agent.Runtime.HealthCheck
		assert.Equal(t, []*int32{ptr.To[int32](30), ptr.To[int32](10), ptr.To[int32](5), ptr.To[int32](3)},
			[]*int32{hc.InitialDelaySeconds, hc.PeriodSeconds, hc.TimeoutSeconds, hc.FailureThreshold})
		assert.Equal(t, ptr.To[int32](300), got.Spec.Agent.Capabilities[0].TimeoutSeconds)
		assert.JSONEq(t, string(a.Spec.Agent.Capabilities[0].InputSchema.Raw), string(got.Spec.Agent.Capabilities[0].InputSchema.Raw))
		assert.JSONEq(t, `"https://schemas.example.com/summarize-in.json"`, string(got.Spec.Agent.Capabilities[1].InputSchema.Raw))
	})

	t.Run("kubectl scale works on spec.replicas", func(t *testing.T) {
		u := toUnstructured(t, validAgent(validationNamespace, uniqueName("agent-scale")))
		_, err := agents.Create(t.Context(), u, metav1.CreateOptions{})
		require.NoError(t, err)
		deleteOnCleanup(t, agents, u.GetName())
		scaleTo(t, dc, u.GetName(), 4)
		got, err := agents.Get(t.Context(), u.GetName(), metav1.GetOptions{})
		require.NoError(t, err)
		replicas, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas")
		assert.Equal(t, int64(4), replicas)
	})
}

// scaleTo sets the agent's replicas through the scale subresource, as
// kubectl scale does.
func scaleTo(t *testing.T, dc dynamic.Interface, name string, replicas int64) {
	t.Helper()
	rc := dc.Resource(agentsResource).Namespace(validationNamespace)
	scale, err := rc.Get(t.Context(), name, metav1.GetOptions{}, "scale")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(scale.Object, replicas, "spec", "replicas"))
	_, err = rc.Update(t.Context(), scale, metav1.UpdateOptions{}, "scale")
	if apierrors.IsInvalid(err) {
		t.Fatalf("scale refused: %v", err)
	}
	require.NoError(t, err)
}

// TestAgentGeneratedClients: the generated ossa.ai clientset applies an Agent
// with its apply configurations (server-side apply, field owner), a second
// owner's apply of another field keeps both, and the generated informer and
// lister see it.
func TestAgentGeneratedClients(t *testing.T) {
	env := testenv.Require(t)
	ensureNamespace(t, env.Config, validationNamespace)
	cs := newSchedulerClient(t, env.Config)
	name := uniqueName("agent-ssa")
	apply := ossaac.Agent(name, validationNamespace).WithSpec(ossaac.AgentSpec().WithOSSAVersion("1.0").
		WithAgent(ossaac.AgentDefinition().WithID("echo").WithName("Echo").WithVersion("0.1.0").WithRole("chat").
			WithRuntime(ossaac.AgentRuntime().WithType(ossav1.RuntimeDocker).WithImage("ghcr.io/opsnorth/echo:0.1.0")).
			WithCapabilities(ossaac.Capability().WithName("echo").WithDescription("Says it back").
				WithInputSchema(raw(map[string]any{"type": "string"})).WithOutputSchema(raw("https://schemas.example.com/echo.json")))))
	got, err := cs.OssaV1().Agents(validationNamespace).Apply(t.Context(), apply, metav1.ApplyOptions{FieldManager: "owner-a"})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.OssaV1().Agents(validationNamespace).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	assert.Equal(t, "echo", got.Spec.Agent.ID)

	_, err = cs.OssaV1().Agents(validationNamespace).Apply(t.Context(),
		ossaac.Agent(name, validationNamespace).WithSpec(ossaac.AgentSpec().WithReplicas(3)), metav1.ApplyOptions{FieldManager: "owner-b"})
	require.NoError(t, err)

	factory := ossainformers.NewSharedInformerFactoryWithOptions(cs, 0, ossainformers.WithNamespace(validationNamespace))
	lister := factory.Ossa().V1().Agents().Lister()
	ctx, stop := context.WithCancel(t.Context())
	factory.Start(ctx.Done())
	defer factory.Shutdown() // after stop: Shutdown waits for the informers to end
	defer stop()
	factory.WaitForCacheSync(ctx.Done())
	cached, err := lister.Agents(validationNamespace).Get(name)
	require.NoError(t, err)
	assert.Equal(t, ptr.To[int32](3), cached.Spec.Replicas, "owner-b's field")
	assert.Equal(t, "ghcr.io/opsnorth/echo:0.1.0", cached.Spec.Agent.Runtime.Image, "owner-a's field kept")
}
