package localcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Process is a long-running program the cluster supervises: started in its
// own process group with its output in <dir>/logs/<name>.log, stopped with
// SIGTERM and, after a grace period, SIGKILL.
type Process struct {
	// Name identifies the process and names its log file.
	Name string
	// Path is the executable.
	Path string
	// Args are the command-line arguments, without the program name.
	Args []string
	// LogPath is where stdout and stderr go.
	LogPath string

	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error
}

// PID returns the process id, which is also its process group id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is the process's exit error once it has ended (nil while it runs).
func (p *Process) Err() error {
	if !p.Exited() {
		return nil
	}
	return p.err
}

// State describes the process for people: "running", or how it ended.
func (p *Process) State() string {
	switch {
	case !p.Exited():
		return "running"
	case p.err == nil:
		return "exited with status 0"
	default:
		return "exited: " + p.err.Error()
	}
}

// startProcess launches path with args and env (added to the current
// environment) in its own process group.
func startProcess(logDir, name, path string, args, env []string) (*Process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log of %s: %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), env...)
	// Own process group: a signal to the caller's group (a terminal's Ctrl-C, a
	// timeout wrapper) does not reach it, so the cluster stops it in order.
	// Pdeathsig is the safety net for a caller killed without a chance to stop it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, path, err)
	}
	p := &Process{Name: name, Path: path, Args: args, LogPath: logPath, cmd: cmd, log: logFile, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// Stop stops the process as Cluster.Stop would, ahead of it (e.g. a manager
// whose packaged Deployment was deleted): SIGTERM to its process group,
// SIGKILL after grace. Cluster.Stop then finds it ended and only makes sure
// nothing of its process group is left.
func (p *Process) Stop(grace time.Duration) error { return p.stop(grace) }

// stop sends SIGTERM to the process group, waits up to grace for the process
// to exit, then sends SIGKILL to the group. It returns once the process has
// been reaped and no member of its group is left.
func (p *Process) stop(grace time.Duration) error {
	pgid := p.PID()
	if p.Exited() {
		return reapGroup(p.Name, pgid)
	}
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %s (pid %d): %w", p.Name, pgid, err)
	}
	select {
	case <-p.done:
		return reapGroup(p.Name, pgid)
	case <-time.After(grace):
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s (pid %d): %w", p.Name, pgid, err)
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) still running after SIGKILL", p.Name, pgid)
	}
	return errors.Join(&KilledError{Name: p.Name, PID: pgid, Grace: grace}, reapGroup(p.Name, pgid))
}

// KilledError is a process that ignored SIGTERM for its grace period and was
// killed: gone, but not stopped cleanly.
type KilledError struct {
	Name  string
	PID   int
	Grace time.Duration
}

func (e *KilledError) Error() string {
	return fmt.Sprintf("%s (pid %d) ignored SIGTERM for %s and was killed", e.Name, e.PID, e.Grace)
}

// OnlyKilled reports whether err (as Stop returns it) holds nothing but
// KilledErrors: everything stopped, some of it the hard way.
func OnlyKilled(err error) bool {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			if !OnlyKilled(e) {
				return false
			}
		}
		return len(joined.Unwrap()) > 0
	}
	var killed *KilledError
	return errors.As(err, &killed)
}

// reapGroup makes sure nothing of process group pgid outlives its leader:
// children the leader left behind get SIGKILL, and it waits for them to go.
func reapGroup(name string, pgid int) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := syscall.Kill(-pgid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("kill the rest of %s's process group %d: %w", name, pgid, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes of %s's group %d outlive it", name, pgid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tail returns the last n bytes of the process's log, for error messages.
func (p *Process) tail(n int64) string {
	f, err := os.Open(p.LogPath)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-n, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return ""
	}
	return string(buf)
}
