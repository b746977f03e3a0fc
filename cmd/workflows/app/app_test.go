package app

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"opsnorth.io/scheduler/pkg/manager"
)

// run executes the workflows command with a captured run function and returns
// the component passed to it (nil if run was not called).
func run(t *testing.T, args ...string) (*Options, *manager.Component, error) {
	t.Helper()
	o := &Options{}
	var got *manager.Component
	cmd := manager.NewCommand(component(o), manager.WithRunFunc(
		func(_ context.Context, _ manager.Options, c manager.Component) error { got = &c; return nil }))
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SetArgs(args)
	return o, got, cmd.Execute()
}

func unsetWorkflowNamespace(t *testing.T) {
	t.Setenv("WORKFLOW_NAMESPACE", "")
	require.NoError(t, os.Unsetenv("WORKFLOW_NAMESPACE"))
}

func TestWorkflowNamespaces(t *testing.T) {
	tests := []struct {
		name    string
		env     *string
		args    []string
		want    manager.Namespaces
		wantErr string
	}{
		{name: "default", want: manager.Namespaces{"agent-tasks"}},
		{name: "env", env: new("a, b"), want: manager.Namespaces{"a", "b"}},
		{name: "empty env means all", env: new(""), want: nil},
		{name: "flag wins over env", env: new("a"), args: []string{"--workflow-namespace=c"}, want: manager.Namespaces{"c"}},
		{name: "empty flag means all", args: []string{"--workflow-namespace="}, want: nil},
		{name: "invalid", args: []string{"--workflow-namespace=Not_Valid"}, wantErr: `"--workflow-namespace"`},
		{name: "invalid env", env: new("Not_Valid"), wantErr: "WORKFLOW_NAMESPACE (--workflow-namespace)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unsetWorkflowNamespace(t)
			if tt.env != nil {
				t.Setenv("WORKFLOW_NAMESPACE", *tt.env)
			}
			o, got, err := run(t, tt.args...)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.Equal(t, tt.want, o.WorkflowNamespaces)
			assert.Equal(t, tt.want, got.Namespaces())
		})
	}
}

func TestComponent(t *testing.T) {
	c := component(&Options{})
	assert.Equal(t, "workflows", c.Name)
	assert.Equal(t, "workflows.scheduler.opsnorth.io", c.LeaderElectionID)
	assert.Equal(t, "opsnorth-scheduler-workflows", c.FieldOwner())
	require.NotNil(t, c.Setup)
	assert.NoError(t, c.Setup(t.Context(), &manager.Deps{}))
}

func TestHelp(t *testing.T) {
	cmd := NewCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	require.NoError(t, cmd.Execute())
	for _, want := range []string{
		"--workflow-namespace", "(env WORKFLOW_NAMESPACE)", "(default agent-tasks)",
		"--kube-api-qps", "(env KUBE_API_QPS)", "--leader-elect", "--version",
	} {
		assert.Contains(t, out.String(), want)
	}
}
