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

// NamespaceFlagAlias checks a deprecated name of a component's
// --watch-namespace (manager.AddDeprecatedAlias), alias with its
// environment variable aliasEnv: both still work, the new flag's and
// variable's win, and the alias is hidden from --help.
func NamespaceFlagAlias(t *testing.T, newComponent func() manager.Component, alias, aliasEnv string) {
	const flag, env = "--" + manager.WatchNamespaceFlag, "WATCH_NAMESPACE"
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    manager.Namespaces
		wantErr string
	}{
		{name: "old flag", args: []string{"--" + alias + "=a,b"}, want: manager.Namespaces{"a", "b"}},
		{name: "old env", env: map[string]string{aliasEnv: "a"}, want: manager.Namespaces{"a"}},
		{name: "new env wins over old env", env: map[string]string{env: "new", aliasEnv: "old"}, want: manager.Namespaces{"new"}},
		{name: "old flag wins over new env", env: map[string]string{env: "env"}, args: []string{"--" + alias + "=flag"}, want: manager.Namespaces{"flag"}},
		{name: "not both flags", args: []string{flag + "=a", "--" + alias + "=b"}, wantErr: "--" + alias + " is a deprecated alias of " + flag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			UnsetEnv(t, env, aliasEnv)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			if got := ParseExpect(t, newComponent(), tt.wantErr, tt.args...); got != nil {
				assert.Equal(t, tt.want, got.Namespaces())
			}
		})
	}
	help := HelpText(t, newComponent())
	assert.Contains(t, help, flag)
	assert.NotContains(t, help, alias, "the deprecated name stays out of --help")
}
