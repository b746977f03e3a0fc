package localcluster

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// groupGone reports whether no process of the group pgid is left.
func groupGone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

func TestProcessStop(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		wantErr string
	}{
		{"exits on SIGTERM", "echo started; exec sleep 60", ""},
		// The child sleep shares the group, so SIGKILL to the group takes it too.
		{"ignores SIGTERM and is killed", "trap '' TERM; echo started; sleep 60 & wait", "ignored SIGTERM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p, err := startProcess(dir, "proc", "/bin/sh", []string{"-c", tt.script}, []string{"LOCALCLUSTER_TEST=1"})
			require.NoError(t, err)
			require.Eventually(t, func() bool { return strings.Contains(p.tail(100), "started") }, 10*time.Second, 20*time.Millisecond)
			pgid, err := syscall.Getpgid(p.PID())
			require.NoError(t, err)
			assert.Equal(t, p.PID(), pgid, "a process leads its own group")
			assert.NotEqual(t, syscall.Getpgrp(), pgid)
			assert.False(t, p.Exited())

			err = p.stop(500 * time.Millisecond)
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
				assert.True(t, OnlyKilled(errors.Join(err, err)), "a kill after the grace period is all that went wrong")
			}
			assert.True(t, p.Exited())
			assert.True(t, groupGone(pgid), "no process of the group may survive")
			require.NoError(t, p.stop(time.Second), "stopping twice is a no-op")
		})
	}
}

func TestProcessLogAndEnv(t *testing.T) {
	dir := t.TempDir()
	p, err := startProcess(dir, "env", "/bin/sh", []string{"-c", `echo "v=$LOCALCLUSTER_TEST"; echo oops >&2`}, []string{"LOCALCLUSTER_TEST=42"})
	require.NoError(t, err)
	require.Eventually(t, p.Exited, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, p.Err())
	data, err := os.ReadFile(dir + "/env.log")
	require.NoError(t, err)
	assert.Equal(t, "v=42\noops\n", string(data))
}

func TestOnlyKilled(t *testing.T) {
	killed := &KilledError{Name: "kube-apiserver", PID: 7, Grace: time.Second}
	other := errors.New("processes of etcd's group 8 outlive it")
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"one kill", killed, true},
		{"kills joined", errors.Join(errors.Join(killed), killed), true},
		{"a kill wrapped", fmt.Errorf("stop: %w", killed), true},
		{"another error", other, false},
		{"a kill and another error", errors.Join(killed, other), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, OnlyKilled(tt.err))
		})
	}
}
