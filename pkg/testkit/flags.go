package testkit

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"opsnorth.io/scheduler/pkg/manager"
)

// NamespaceFlag checks the watched-namespaces flag of the components that
// newComponent declares (a new one per call) and its environment fallback
// env: def by default; a comma list from the environment; an empty value
// (flag or environment) means all namespaces; the flag wins over the
// environment; an invalid name is refused, naming where it came from.
func NamespaceFlag(t *testing.T, newComponent func() manager.Component, flag, env string, def manager.Namespaces) {
	tests := []struct {
		name    string
		env     *string
		args    []string
		want    manager.Namespaces
		wantErr string
	}{
		{name: "default", want: def},
		{name: "env", env: new("a, b"), want: manager.Namespaces{"a", "b"}},
		{name: "empty env means all", env: new(""), want: nil},
		{name: "flag wins over env", env: new("a"), args: []string{"--" + flag + "=c"}, want: manager.Namespaces{"c"}},
		{name: "empty flag means all", args: []string{"--" + flag + "="}, want: nil},
		{name: "invalid", args: []string{"--" + flag + "=Not_Valid"}, wantErr: `"--` + flag + `"`},
		{name: "invalid env", env: new("Not_Valid"), wantErr: env + " (--" + flag + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			UnsetEnv(t, env)
			if tt.env != nil {
				t.Setenv(env, *tt.env)
			}
			if got := ParseExpect(t, newComponent(), tt.wantErr, tt.args...); got != nil {
				assert.Equal(t, tt.want, got.Namespaces())
			}
		})
	}
}

// UnsetEnv unsets the environment variables names for the test and
// restores them after it.
func UnsetEnv(t *testing.T, names ...string) {
	for _, name := range names {
		t.Setenv(name, "")
		require.NoError(t, os.Unsetenv(name))
	}
}
