//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"opsnorth.io/scheduler/pkg/localcluster"
)

// cluster is the package's local cluster, started by TestMain; nil under
// -short. root is the repository it was started from.
var (
	cluster *localcluster.Cluster
	root    string
)

func TestMain(m *testing.M) {
	os.Exit(localcluster.Suite{
		Name: "e2e", KeepEnv: "E2E_KEEP",
		Start: func(ctx context.Context, c *localcluster.Cluster, repo string) error {
			cluster, root = c, repo
			if err := startSuite(ctx, c, repo); err != nil {
				return fmt.Errorf("start the managers: %w", err)
			}
			return nil
		},
		Check:   func(string) error { return rbacErrors(managers) },
		Stopped: survivors,
	}.Run(m))
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
