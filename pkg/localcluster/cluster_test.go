package localcluster

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStartFailureCleansUp starts clusters that cannot come up and checks
// that Start says why, and leaves neither a process nor its directory behind.
func TestStartFailureCleansUp(t *testing.T) {
	tests := []struct {
		name    string
		etcd    string // script installed as the etcd binary; "" installs none
		wantErr []string
	}{
		{"missing binary", "", []string{"start etcd", "no such file"}},
		{"binary exits", "#!/bin/sh\necho 'etcd: bad flag' >&2\nexit 3\n", []string{"etcd exited: exit status 3 before it was healthy", "etcd: bad flag"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			if tt.etcd != "" {
				require.NoError(t, os.WriteFile(filepath.Join(bin, "etcd"), []byte(tt.etcd), 0o700))
			}
			dir := filepath.Join(t.TempDir(), "cluster")
			_, err := Start(t.Context(), Options{Dir: dir, BinDir: bin, StagesDir: stagesDir, StartTimeout: 30 * time.Second})
			require.Error(t, err)
			for _, want := range tt.wantErr {
				assert.ErrorContains(t, err, want)
			}
			assert.NoDirExists(t, dir, "a failed Start removes its state")
		})
	}
}

func TestStartRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "precious")
	require.NoError(t, os.WriteFile(keep, []byte("x"), 0o600))
	_, err := Start(t.Context(), Options{Dir: dir, BinDir: t.TempDir(), StagesDir: stagesDir})
	require.ErrorContains(t, err, "not empty")
	assert.FileExists(t, keep)
}
