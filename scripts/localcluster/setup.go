package main

import (
	"context"
	"io"
	"path/filepath"

	"opsnorth.io/scheduler/pkg/localcluster"
)

// step is one thing done to a fresh cluster before it is handed over.
// Starting a manager as its ServiceAccount, or applying samples, is one more
// step in setupSteps.
type step struct {
	name string
	run  func(ctx context.Context, cluster *localcluster.Cluster, out io.Writer) error
}

// setupSteps are run in order on the started cluster.
func setupSteps(root string) []step {
	return []step{
		{name: "install CRDs", run: applyStep(
			filepath.Join(root, "manifests", "crd", "*.yaml"),
			filepath.Join(root, "manifests", "thirdparty", "*.yaml"),
		)},
	}
}

// applyStep server-side applies the files matching the patterns.
func applyStep(patterns ...string) func(context.Context, *localcluster.Cluster, io.Writer) error {
	return func(ctx context.Context, cluster *localcluster.Cluster, out io.Writer) error {
		files, err := localcluster.ManifestFiles(patterns...)
		if err != nil {
			return err
		}
		n, err := cluster.Apply(ctx, files...)
		if err != nil {
			return err
		}
		say(out, "applied %d objects from %d files\n", n, len(files))
		return nil
	}
}
