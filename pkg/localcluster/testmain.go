package localcluster

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Suite is a test package that runs on its own local cluster (e2e, chaos).
type Suite struct {
	// Name prefixes the suite's messages, e.g. "e2e".
	Name string
	// KeepEnv names the environment variable that keeps the cluster's state
	// directory after a green run (it is always kept after a red one).
	KeepEnv string
	// Start prepares the cluster for the tests (RBAC, managers, ...) and
	// keeps it for them; the CRDs, ours and the third-party ones, are
	// installed already (ours unless OwnCRDs). It has six minutes.
	Start func(ctx context.Context, c *Cluster, root string) error
	// OwnCRDs leaves the scheduler's CRDs (manifests/crd) to the suite, for
	// one that tests how a packaging installs them (test/install); the
	// third-party CRDs (manifests/thirdparty) are installed all the same.
	OwnCRDs bool
	// Check, if set, runs after the tests, before the cluster stops; an
	// error fails the run.
	Check func(root string) error
	// Stopped, if set, runs after the cluster stopped, with the process
	// (group) ids it ran by name; an error fails the run.
	Stopped func(pids map[string]int) error
}

// Run starts a local cluster for the package's tests, installs the CRDs,
// calls s.Start, runs the tests and stops the cluster; it returns the exit
// code. With -short it runs the tests without a cluster (they skip). Call
// it from TestMain: os.Exit(suite.Run(m)).
func (s Suite) Run(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		return m.Run()
	}
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, s.Name+": "+format+"\n", args...)
		return 1
	}
	root, err := RepoRoot()
	if err != nil {
		return fail("%v", err)
	}
	c, err := Start(context.Background(), Options{})
	if err != nil {
		return fail("start local cluster: %v", err)
	}
	code := func() int {
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		defer cancel()
		patterns := []string{filepath.Join(root, "manifests", "thirdparty", "*.yaml")}
		if !s.OwnCRDs {
			patterns = append([]string{filepath.Join(root, "manifests", "crd", "*.yaml")}, patterns...)
		}
		files, err := ManifestFiles(patterns...)
		if err == nil {
			_, err = c.Apply(ctx, files...)
		}
		if err != nil {
			return fail("install CRDs: %v", err)
		}
		if err := s.Start(ctx, c, root); err != nil {
			return fail("%v", err)
		}
		return m.Run()
	}()
	if s.Check != nil {
		if err := s.Check(root); err != nil {
			code = fail("%v", err)
		}
	}
	if code != 0 || os.Getenv(s.KeepEnv) != "" {
		c.KeepOnStop()
		fmt.Fprintf(os.Stderr, "%s: the cluster's state stays in %s (component logs in %s)\n", s.Name, c.Dir, c.LogDir())
	}
	pids := make(map[string]int)
	for _, p := range c.Processes() {
		pids[p.Name] = p.PID()
	}
	if err := c.Stop(); err != nil {
		code = fail("stop local cluster: %v", err)
	}
	if s.Stopped != nil {
		if err := s.Stopped(pids); err != nil {
			code = fail("%v", err)
		}
	}
	return code
}
