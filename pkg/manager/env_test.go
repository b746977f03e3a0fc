package manager

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApplyEnv(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		wantCount int
		wantName  string
		wantErr   string
	}{
		{name: "defaults without env", wantCount: 1, wantName: "default"},
		{name: "env fallback", env: map[string]string{"COUNT": "7", "NAME": "env"}, wantCount: 7, wantName: "env"},
		{name: "flag wins over env", args: []string{"--count=3", "--name=flag"},
			env: map[string]string{"COUNT": "7", "NAME": "env"}, wantCount: 3, wantName: "flag"},
		{name: "empty env ignored for int", env: map[string]string{"COUNT": ""}, wantCount: 1, wantName: "default"},
		{name: "empty env applied to string", env: map[string]string{"NAME": ""}, wantCount: 1, wantName: ""},
		{name: "invalid env names variable and flag", env: map[string]string{"COUNT": "many"},
			wantErr: `invalid value "many" for COUNT (--count)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			count := fs.Int("count", 1, "Count.")
			name := fs.String("name", "default", "Name.")
			fs.Int("unbound", 5, "Not bound to env.")
			BindEnv(fs, "count", "COUNT")
			BindEnv(fs, "name", "NAME")
			require.NoError(t, fs.Parse(tt.args))

			err := applyEnv(fs, func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantCount, *count)
			assert.Equal(t, tt.wantName, *name)
		})
	}
}

func TestBindEnv(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.Int("count", 1, "Count.")
	BindEnv(fs, "count", "COUNT")

	env, ok := EnvVar(fs.Lookup("count"))
	assert.True(t, ok)
	assert.Equal(t, "COUNT", env)
	assert.Equal(t, "Count. (env COUNT)", fs.Lookup("count").Usage)
	assert.PanicsWithValue(t, "manager.BindEnv: flag --missing is not defined", func() {
		BindEnv(fs, "missing", "MISSING")
	})
}

func TestBindEnvs(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.String("task-namespace", "", "Namespaces.")
	fs.Int("kube-api-qps", 0, "QPS.")
	BindEnvs(fs, "task-namespace", "kube-api-qps")
	for flag, want := range map[string]string{"task-namespace": "TASK_NAMESPACE", "kube-api-qps": "KUBE_API_QPS"} {
		env, ok := EnvVar(fs.Lookup(flag))
		require.True(t, ok, flag)
		assert.Equal(t, want, env)
		assert.Contains(t, fs.Lookup(flag).Usage, "(env "+want+")")
	}
	assert.Panics(t, func() { BindEnvs(fs, "missing") }, "an undefined flag is a programming error")
}
