package manager

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLabels(t *testing.T) {
	tests := []struct {
		in      string
		want    Labels
		wantErr string
	}{
		{in: "", want: Labels{}},
		{in: "www", want: Labels{"www"}},
		{in: " www , api,www,", want: Labels{"www", "api"}},
		{in: "www,Bad_Label", wantErr: `invalid label "Bad_Label"`},
		{in: "a.b", wantErr: `invalid label "a.b"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var l Labels
			err := l.Set(tt.in)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, l)
		})
	}
}

func TestLabelsEmptyEnv(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	l := Labels{"www"}
	fs.Var(&l, "reserved", "Reserved.")
	BindEnv(fs, "reserved", "RESERVED")
	require.NoError(t, fs.Parse(nil))
	require.NoError(t, applyEnv(fs, func(string) (string, bool) { return "", true }))
	assert.Equal(t, Labels{}, l, "an empty variable empties the list")
}

func TestOwnNamespace(t *testing.T) {
	file := filepath.Join(t.TempDir(), "namespace")
	old := serviceAccountNamespace
	t.Cleanup(func() { serviceAccountNamespace = old })
	serviceAccountNamespace = file
	assert.Equal(t, "default", (&Options{}).OwnNamespace(), "out of a cluster")
	require.NoError(t, os.WriteFile(file, []byte("opsnorth-system\n"), 0o600))
	assert.Equal(t, "opsnorth-system", (&Options{}).OwnNamespace(), "the pod's namespace")
	assert.Equal(t, "ops", (&Options{LeaderElectionNamespace: "ops"}).OwnNamespace(), "the flag wins")
}
