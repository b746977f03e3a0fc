package localcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"
)

// RestartAPIServer crashes kube-apiserver (SIGKILL to its process group, as
// an OOM kill or a node failure would) and starts it again at once with the
// same arguments, so on the same port with the same certificates, then waits
// until it is ready. Clients keep their configuration: a failure drill for
// everything that talks to it. Its log continues in the same file. It
// returns how long the apiserver was down (kill → ready again).
//
// It kills rather than stops: on SIGTERM kube-apiserver drains watches and
// in-flight requests for longer than a leader's renew deadline, so a stop
// would measure its shutdown, not a restart.
func (c *Cluster) RestartAPIServer(ctx context.Context) (time.Duration, error) {
	old := c.process("kube-apiserver")
	if old == nil || old.Exited() {
		return 0, fmt.Errorf("restart kube-apiserver: not running")
	}
	start := time.Now()
	if err := syscall.Kill(-old.PID(), syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return 0, fmt.Errorf("kill kube-apiserver: %w", err)
	}
	select {
	case <-old.done:
	case <-time.After(10 * time.Second):
		return 0, fmt.Errorf("kube-apiserver (pid %d) still running 10s after SIGKILL", old.PID())
	}
	if err := reapGroup(old.Name, old.PID()); err != nil {
		return 0, err
	}
	p, err := c.replaceProcess(old, func() (*Process, error) {
		return startProcess(c.layout.path("logs"), old.Name, old.Path, old.Args, nil)
	})
	if err != nil {
		return 0, err
	}
	admin, err := adminClient(c.pki)
	if err != nil {
		return 0, err
	}
	if err := waitHealthy(ctx, p, probe{URL: c.layout.APIServerURL() + "/readyz", Want: "ok", Client: admin}); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// process returns the supervised process named name, or nil.
func (c *Cluster) process(name string) *Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.IndexFunc(c.procs, func(p *Process) bool { return p.Name == name })
	if i < 0 {
		return nil
	}
	return c.procs[i]
}

// replaceProcess starts a successor of the exited process old and puts it in
// old's place, so Stop keeps the start order.
func (c *Cluster) replaceProcess(old *Process, start func() (*Process, error)) (*Process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil, fmt.Errorf("restart %s: cluster is stopped", old.Name)
	}
	i := slices.Index(c.procs, old)
	if i < 0 {
		return nil, fmt.Errorf("restart %s: not supervised", old.Name)
	}
	p, err := start()
	if err != nil {
		return nil, err
	}
	c.procs[i] = p
	return p, nil
}
