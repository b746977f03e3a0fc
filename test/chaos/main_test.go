//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"opsnorth.io/scheduler/pkg/localcluster"
)

var (
	cluster *localcluster.Cluster
	// replicas are the two manager processes of each component, by component.
	replicas = map[string][]*localcluster.Manager{}
	repoRoot string
)

func TestMain(m *testing.M) {
	os.Exit(localcluster.Suite{
		Name: "chaos", KeepEnv: "CHAOS_KEEP", Start: startSuite,
		Check: func(root string) error { return writeSummary(filepath.Join(root, "_output", "chaos", "summary.json")) },
	}.Run(m))
}

// startSuite installs the packaged RBAC and starts two replicas
// (<component>-a, <component>-b) of every manager, each as its ServiceAccount.
func startSuite(ctx context.Context, c *localcluster.Cluster, root string) error {
	cluster, repoRoot = c, root
	if _, err := c.InstallRBAC(ctx, root); err != nil {
		return err
	}
	bins, err := localcluster.BuildManagers(ctx, root, filepath.Join(c.Dir, "bin"))
	if err != nil {
		return err
	}
	for _, comp := range localcluster.Components {
		for _, suffix := range []string{"a", "b"} {
			m, err := c.StartManager(ctx, comp+"-"+suffix, comp, bins[comp])
			if err != nil {
				return fmt.Errorf("start %s-%s: %w", comp, suffix, err)
			}
			replicas[comp] = append(replicas[comp], m)
		}
	}
	return nil
}

// requireCluster returns the local cluster, or skips under -short.
func requireCluster(t *testing.T) *localcluster.Cluster {
	t.Helper()
	if cluster == nil {
		t.Skip("failure drill: needs the local cluster (run without -short)")
	}
	return cluster
}
