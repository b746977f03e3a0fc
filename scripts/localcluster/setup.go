package main

import (
	"context"
	"io"
	"path/filepath"

	"opsnorth.io/scheduler/pkg/localcluster"
)

// step is one thing done to a fresh cluster before it is handed over; run
// says what it did, the caller when it starts and how long it took.
type step struct {
	name string
	run  func(ctx context.Context, cluster *localcluster.Cluster, out io.Writer) error
}

// setup is what the steps share: the repository, and the manager binaries
// once built.
type setup struct {
	root string
	bins map[string]string
}

// steps are run in order on the started cluster.
func (s *setup) steps() []step {
	return []step{
		{name: "install CRDs", run: applyStep(
			filepath.Join(s.root, "manifests", "crd", "*.yaml"),
			filepath.Join(s.root, "manifests", "thirdparty", "*.yaml"),
		)},
		{name: "install RBAC", run: s.installRBAC},
		// Minutes on a cold build cache, seconds after.
		{name: "build the managers (go build ./cmd/{deployments,tasks,workflows})", run: s.buildManagers},
		{name: "start the managers", run: s.startManagers},
		{name: "apply samples", run: applyStep(
			filepath.Join(s.root, "manifests", "samples", "prerequisites", "*.yaml"),
			filepath.Join(s.root, "manifests", "samples", "*.yaml"),
		)},
	}
}

// installRBAC applies the namespaces, ServiceAccounts, roles and bindings of
// the all-in-one kustomize overlay.
func (s *setup) installRBAC(ctx context.Context, cluster *localcluster.Cluster, out io.Writer) error {
	n, err := cluster.InstallRBAC(ctx, s.root)
	if err != nil {
		return err
	}
	say(out, "applied %d RBAC objects from kustomize/overlays/all-in-one\n", n)
	return nil
}

func (s *setup) buildManagers(ctx context.Context, cluster *localcluster.Cluster, _ io.Writer) error {
	var err error
	s.bins, err = localcluster.BuildManagers(ctx, s.root, filepath.Join(cluster.Dir, "bin"))
	return err
}

// startManagers runs each manager as its own ServiceAccount, so missing or
// excess RBAC shows up in their logs.
func (s *setup) startManagers(ctx context.Context, cluster *localcluster.Cluster, out io.Writer) error {
	for _, comp := range localcluster.Components {
		m, err := cluster.StartManager(ctx, comp, comp, s.bins[comp])
		if err != nil {
			return err
		}
		say(out, "%s manager ready as %s/opsnorth-scheduler-%s (metrics http://%s/metrics)\n",
			comp, localcluster.ManagerNamespace, comp, m.MetricsAddr)
	}
	return nil
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
