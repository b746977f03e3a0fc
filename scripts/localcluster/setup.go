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
		{name: "install RBAC", run: installRBAC(root)},
		{name: "start managers", run: startManagers(root)},
		{name: "apply samples", run: applyStep(
			filepath.Join(root, "manifests", "samples", "prerequisites", "*.yaml"),
			filepath.Join(root, "manifests", "samples", "*.yaml"),
		)},
	}
}

// installRBAC applies the namespaces, ServiceAccounts, roles and bindings of
// the all-in-one kustomize overlay.
func installRBAC(root string) func(context.Context, *localcluster.Cluster, io.Writer) error {
	return func(ctx context.Context, cluster *localcluster.Cluster, out io.Writer) error {
		n, err := cluster.InstallRBAC(ctx, root)
		if err != nil {
			return err
		}
		say(out, "applied %d RBAC objects from kustomize/overlays/all-in-one\n", n)
		return nil
	}
}

// startManagers builds the three managers and runs each as its own
// ServiceAccount, so missing or excess RBAC shows up in their logs.
func startManagers(root string) func(context.Context, *localcluster.Cluster, io.Writer) error {
	return func(ctx context.Context, cluster *localcluster.Cluster, out io.Writer) error {
		bins, err := localcluster.BuildManagers(ctx, root, filepath.Join(cluster.Dir, "bin"))
		if err != nil {
			return err
		}
		for _, comp := range localcluster.Components {
			m, err := cluster.StartManager(ctx, comp, comp, bins[comp])
			if err != nil {
				return err
			}
			say(out, "%s manager ready as %s/opsnorth-scheduler-%s (metrics http://%s/metrics)\n",
				comp, localcluster.ManagerNamespace, comp, m.MetricsAddr)
		}
		return nil
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
