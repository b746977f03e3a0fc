//go:build e2e

package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"opsnorth.io/scheduler/pkg/localcluster"
)

// cluster is the package's local cluster, started by TestMain; nil under -short.
var (
	cluster       *localcluster.Cluster
	startDuration time.Duration
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		return m.Run()
	}
	root, err := localcluster.RepoRoot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	start := time.Now()
	c, err := localcluster.Start(context.Background(), localcluster.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: start local cluster: %v\n", err)
		return 1
	}
	startDuration = time.Since(start)
	cluster = c
	code := func() int {
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		defer cancel()
		files, err := localcluster.ManifestFiles(
			filepath.Join(root, "manifests", "crd", "*.yaml"),
			filepath.Join(root, "manifests", "thirdparty", "*.yaml"),
		)
		if err == nil {
			_, err = c.Apply(ctx, files...)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: install CRDs: %v\n", err)
			return 1
		}
		if err := startSuite(ctx, c, root); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: start the managers: %v\n", err)
			return 1
		}
		code := m.Run()
		if err := rbacErrors(managers); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			code = 1
		}
		return code
	}()
	if code != 0 || os.Getenv("E2E_KEEP") != "" {
		c.KeepOnStop()
		fmt.Fprintf(os.Stderr, "e2e: the cluster's state stays in %s (component logs in %s)\n", c.Dir, c.LogDir())
	}
	pids := make(map[string]int)
	for _, p := range c.Processes() {
		pids[p.Name] = p.PID()
	}
	if err := c.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: stop local cluster: %v\n", err)
		code = 1
	}
	if err := survivors(pids); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		code = 1
	}
	return code
}

// survivors returns an error naming every process (or member of its process
// group) still alive after Stop.
func survivors(pids map[string]int) error {
	var errs []error
	for name, pid := range pids {
		if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("%s (process group %d) still running after Stop", name, pid))
		}
	}
	if len(errs) == 0 {
		fmt.Printf("e2e: Stop left none of the %d processes behind\n", len(pids))
	}
	return errors.Join(errs...)
}

// requireCluster returns the local cluster, or skips under -short.
func requireCluster(t *testing.T) *localcluster.Cluster {
	t.Helper()
	if cluster == nil {
		t.Skip("end-to-end test: needs the local cluster (run without -short)")
	}
	return cluster
}
