package manager

import (
	"bytes"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeprecatedAlias: a manager's old flag name keeps working, below the
// new one wherever both are set, and says it is deprecated.
func TestDeprecatedAlias(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    Namespaces
		warning string // on the flag set's output
		wantErr string
	}{
		{name: "default", want: nil},
		{name: "new flag", args: []string{"--watch-namespace=a,b"}, want: Namespaces{"a", "b"}},
		{name: "old flag", args: []string{"--task-namespace=a"}, want: Namespaces{"a"},
			warning: "Flag --task-namespace has been deprecated, use --watch-namespace instead"},
		{name: "old flag empty means all", args: []string{"--task-namespace="}, env: map[string]string{"WATCH_NAMESPACE": "x"}, want: nil,
			warning: "Flag --task-namespace has been deprecated"},
		{name: "new env", env: map[string]string{"WATCH_NAMESPACE": "a"}, want: Namespaces{"a"}},
		{name: "old env", env: map[string]string{"TASK_NAMESPACE": "a"}, want: Namespaces{"a"},
			warning: "Environment variable TASK_NAMESPACE is deprecated, use WATCH_NAMESPACE instead"},
		{name: "new env wins over old env", env: map[string]string{"WATCH_NAMESPACE": "new", "TASK_NAMESPACE": "old"}, want: Namespaces{"new"}},
		{name: "empty new env wins over old env", env: map[string]string{"WATCH_NAMESPACE": "", "TASK_NAMESPACE": "old"}, want: nil},
		{name: "old flag wins over new env", args: []string{"--task-namespace=flag"}, env: map[string]string{"WATCH_NAMESPACE": "env"},
			want: Namespaces{"flag"}, warning: "Flag --task-namespace has been deprecated"},
		{name: "new flag wins over old env", args: []string{"--watch-namespace=flag"}, env: map[string]string{"TASK_NAMESPACE": "env"},
			want: Namespaces{"flag"}},
		{name: "both flags", args: []string{"--watch-namespace=a", "--task-namespace=b"},
			wantErr: "--task-namespace is a deprecated alias of --watch-namespace: give only --watch-namespace"},
		{name: "invalid old env names it", env: map[string]string{"TASK_NAMESPACE": "Bad_Name"},
			wantErr: `invalid value "Bad_Name" for TASK_NAMESPACE (--task-namespace)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			var out bytes.Buffer
			fs.SetOutput(&out)
			var ns Namespaces
			AddWatchNamespaceFlag(fs, &ns, "Namespaces.", "task-namespace")
			require.NoError(t, fs.Parse(tt.args))
			err := applyEnv(fs, func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, ns)
			if tt.warning != "" {
				assert.Contains(t, out.String(), tt.warning)
			} else {
				assert.NotContains(t, out.String(), "deprecated")
			}
		})
	}
}

func TestDeprecatedAliasHidden(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	var ns Namespaces
	AddWatchNamespaceFlag(fs, &ns, "Namespaces.", "task-namespace")
	usage := fs.FlagUsages()
	assert.Contains(t, usage, "--watch-namespace namespaces   Namespaces. (env WATCH_NAMESPACE)")
	assert.NotContains(t, usage, "task-namespace", "deprecated names stay out of --help")
	assert.Panics(t, func() { AddDeprecatedAlias(fs, "missing", "old") })
}
