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

// run executes the tasks command with a captured run function and returns
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

func unsetTaskNamespace(t *testing.T) {
	t.Setenv("TASK_NAMESPACE", "")
	require.NoError(t, os.Unsetenv("TASK_NAMESPACE"))
}

func TestTaskNamespaces(t *testing.T) {
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
		{name: "flag wins over env", env: new("a"), args: []string{"--task-namespace=c"}, want: manager.Namespaces{"c"}},
		{name: "empty flag means all", args: []string{"--task-namespace="}, want: nil},
		{name: "invalid", args: []string{"--task-namespace=Not_Valid"}, wantErr: `"--task-namespace"`},
		{name: "invalid env", env: new("Not_Valid"), wantErr: "TASK_NAMESPACE (--task-namespace)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unsetTaskNamespace(t)
			if tt.env != nil {
				t.Setenv("TASK_NAMESPACE", *tt.env)
			}
			o, got, err := run(t, tt.args...)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.Equal(t, tt.want, o.TaskNamespaces)
			assert.Equal(t, tt.want, got.Namespaces())
		})
	}
}

func TestComponent(t *testing.T) {
	c := component(&Options{})
	assert.Equal(t, "tasks", c.Name)
	assert.Equal(t, "tasks.scheduler.opsnorth.io", c.LeaderElectionID)
	assert.Equal(t, "opsnorth-scheduler-tasks", c.FieldOwner())
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
		"--task-namespace", "(env TASK_NAMESPACE)", "(default agent-tasks)",
		"--kube-api-qps", "(env KUBE_API_QPS)", "--leader-elect", "--version",
	} {
		assert.Contains(t, out.String(), want)
	}
}
