package localcluster

import (
	"os"
	"path/filepath"
	"strings"
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

// TestStopKillsSlowProcess: a process that ignores SIGTERM (kube-apiserver
// draining slowly, say) is killed after the grace period, and Stop's error
// says only that, so `make run` can report it and still exit 0.
func TestStopKillsSlowProcess(t *testing.T) {
	c := &Cluster{opts: Options{StopTimeout: 300 * time.Millisecond, Keep: true}, layout: layout{Dir: t.TempDir()}}
	require.NoError(t, os.MkdirAll(c.LogDir(), 0o700))
	slow, err := c.StartProcess("kube-apiserver", "/bin/sh", []string{"-c", "trap '' TERM; echo started; sleep 60 & wait"}, nil)
	require.NoError(t, err)
	quick, err := c.StartProcess("etcd", "/bin/sh", []string{"-c", "echo started; exec sleep 60"}, nil)
	require.NoError(t, err)
	for _, p := range []*Process{slow, quick} {
		require.Eventually(t, func() bool { return strings.Contains(p.tail(100), "started") }, 10*time.Second, 20*time.Millisecond)
	}
	err = c.Stop()
	require.ErrorContains(t, err, "kube-apiserver")
	require.ErrorContains(t, err, "ignored SIGTERM for 300ms and was killed")
	assert.True(t, OnlyKilled(err))
	assert.True(t, slow.Exited())
	assert.True(t, quick.Exited())
}
