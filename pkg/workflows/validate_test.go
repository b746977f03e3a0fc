package workflows

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
)

func TestValidateSpec(t *testing.T) {
	in := func(v string) map[string]string { return map[string]string{"V": v} }
	tests := []struct {
		name    string
		wf      *v1alpha1.Workflow
		wantErr string
	}{
		{name: "sequential refs to earlier steps", wf: makeWorkflow("w").input(map[string]string{"k": "v"}).
			step("a", in("${inputs.k}")).step("b", in("${steps.0.output.x}")).step("c", in("${steps.a.output.x}${steps.b.output.y}")).obj()},
		{name: "ref to a later step", wf: makeWorkflow("w").step("a", in("${steps.b.output.x}")).step("b", nil).obj(),
			wantErr: `step "a" input "V": ${steps.b.output.x}: step "b" is not an ancestor of step "a", so its output is not available`},
		{name: "ref to a parallel branch", wf: makeWorkflow("w").step("a", nil).step("b", nil, "a").step("c", in("${steps.1.output.x}"), "a").obj(),
			wantErr: `step "c" input "V": ${steps.1.output.x}: step "b" is not an ancestor of step "c"`},
		{name: "transitive ancestor", wf: makeWorkflow("w").step("a", nil).step("b", nil, "a").step("c", in("${steps.a.output.x}"), "b").obj()},
		{name: "unknown name", wf: makeWorkflow("w").step("a", nil).step("b", in("${steps.zzz.output.x}")).obj(),
			wantErr: `step "b" input "V": ${steps.zzz.output.x}: no step named "zzz"`},
		{name: "index out of range", wf: makeWorkflow("w").step("a", nil).step("b", in("${steps.7.output.x}")).obj(),
			wantErr: `${steps.7.output.x}: no step with index 7 (the workflow has 2 steps)`},
		{name: "own output", wf: makeWorkflow("w").step("a", in("${steps.a.output.x}")).obj(),
			wantErr: `step "a" is not an ancestor of step "a"`},
		{name: "unset input", wf: makeWorkflow("w").step("a", in("${inputs.nope}")).obj(),
			wantErr: `step "a" input "V": ${inputs.nope}: workflow input "nope" is not set`},
		{name: "malformed", wf: makeWorkflow("w").step("a", in("${steps.0.out}")).obj(),
			wantErr: `step "a" input "V": malformed reference at offset 0`},
		{name: "unknown dependency", wf: makeWorkflow("w").step("a", nil, "x").obj(),
			wantErr: `step "a" depends on unknown step "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := validateSpec(&tt.wf.Spec)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, len(tt.wf.Spec.Steps), g.Len())
		})
	}
}

func TestBuildTask(t *testing.T) {
	wf := makeWorkflow("build").step("compile", map[string]string{"X": "${inputs.k}"}).obj()
	wf.Spec.Steps[0].TimeoutSeconds = new(int64(60))
	wf.Spec.Steps[0].ServiceAccountName = "agent"
	pod := v1alpha1.AgentPod{
		Env: []v1alpha1.SecretEnvVar{{Name: "API_KEY", ValueFrom: v1alpha1.SecretEnvSource{
			SecretKeyRef: v1alpha1.SecretKeyReference{Name: "llm", Key: "key"}}}},
		NodeSelector: map[string]string{"pool": "agents"}, RuntimeClassName: "gvisor",
	}
	wf.Spec.Steps[0].AgentPod = pod
	got := buildTask(wf, 0, 2, map[string]string{"X": "v"})
	assert.Equal(t, TaskName("build", "compile", 2), got.Name)
	assert.Equal(t, "ns", got.Namespace)
	assert.Equal(t, map[string]string{
		"app.kubernetes.io/managed-by": "opsnorth-scheduler", "app.kubernetes.io/part-of": "opsnorth-scheduler",
		"app.kubernetes.io/component": "workflow-step", "scheduler.opsnorth.io/workflow": "build", "scheduler.opsnorth.io/step": "compile",
	}, got.Labels)
	require.Len(t, got.OwnerReferences, 1)
	ref := got.OwnerReferences[0]
	assert.Equal(t, "Workflow", ref.Kind)
	assert.Equal(t, "scheduler.opsnorth.io/v1alpha1", ref.APIVersion)
	assert.Equal(t, wf.UID, ref.UID)
	assert.True(t, *ref.Controller)
	assert.True(t, *ref.BlockOwnerDeletion)
	assert.Equal(t, v1alpha1.AgentTaskSpec{
		TaskID: got.Name, UserID: "u1", Image: "agent:1", Input: map[string]string{"X": "v"},
		TimeoutSeconds: new(int64(60)), ServiceAccountName: "agent", AgentPod: pod,
	}, got.Spec)
	got.Spec.NodeSelector["pool"] = "changed"
	assert.Equal(t, "agents", wf.Spec.Steps[0].NodeSelector["pool"], "the step task has its own copy")
	assert.True(t, isStepOf(got, wf))
	other := makeWorkflow("build").obj()
	other.UID = "someone-else"
	assert.False(t, isStepOf(got, other))
}
