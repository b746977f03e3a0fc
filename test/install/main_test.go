//go:build e2e

package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"opsnorth.io/scheduler/pkg/localcluster"
)

// The package's local cluster, started by TestMain (nil under -short): root
// is the repository it was started from, bins the manager binaries built
// from it, by component.
var (
	cluster *localcluster.Cluster
	root    string
	bins    map[string]string
)

// TestMain starts a local cluster with only the third-party CRDs (the
// packaging under test installs the scheduler's) and builds the managers;
// each test installs what it tests and starts the managers itself
// (startManagers).
func TestMain(m *testing.M) {
	os.Exit(localcluster.Suite{
		Name: "install", KeepEnv: "INSTALL_KEEP", OwnCRDs: true,
		Start: func(ctx context.Context, c *localcluster.Cluster, repo string) error {
			b, err := localcluster.BuildManagers(ctx, repo, filepath.Join(c.Dir, "bin"))
			if err != nil {
				return fmt.Errorf("build the managers: %w", err)
			}
			cluster, root, bins = c, repo, b
			return nil
		},
	}.Run(m))
}

// requireCluster returns the local cluster, or skips under -short.
func requireCluster(t *testing.T) *localcluster.Cluster {
	t.Helper()
	if cluster == nil {
		t.Skip("install test: needs the local cluster (run without -short)")
	}
	return cluster
}
