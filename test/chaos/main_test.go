//go:build chaos

package chaos

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"opsnorth.io/scheduler/pkg/localcluster"
)

var (
	cluster *localcluster.Cluster
	// replicas are the two manager processes of each component, by component.
	replicas = map[string][]*localcluster.Manager{}
	repoRoot string
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
		fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
		return 1
	}
	repoRoot = root
	c, err := localcluster.Start(context.Background(), localcluster.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: start local cluster: %v\n", err)
		return 1
	}
	cluster = c
	code := func() int {
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		defer cancel()
		if err := startSuite(ctx, c, root); err != nil {
			fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
			return 1
		}
		return m.Run()
	}()
	if err := writeSummary(filepath.Join(root, "_output", "chaos", "summary.json")); err != nil {
		fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
		code = 1
	}
	if code != 0 || os.Getenv("CHAOS_KEEP") != "" {
		c.KeepOnStop()
		fmt.Fprintf(os.Stderr, "chaos: the cluster's state stays in %s (component logs in %s)\n", c.Dir, c.LogDir())
	}
	if err := c.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "chaos: stop local cluster: %v\n", err)
		code = 1
	}
	return code
}

// startSuite installs the CRDs and the packaged RBAC and starts two replicas
// (<component>-a, <component>-b) of every manager, each as its ServiceAccount.
func startSuite(ctx context.Context, c *localcluster.Cluster, root string) error {
	files, err := localcluster.ManifestFiles(
		filepath.Join(root, "manifests", "crd", "*.yaml"),
		filepath.Join(root, "manifests", "thirdparty", "*.yaml"),
	)
	if err != nil {
		return err
	}
	if _, err := c.Apply(ctx, files...); err != nil {
		return fmt.Errorf("install CRDs: %w", err)
	}
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
