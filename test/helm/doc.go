// Package helm tests the chart manifests/charts/opsnorth-scheduler with Helm's
// own packages: lint, render, the values schema, parity with the kustomize
// packaging, and a server-side dry run on a real kube-apiserver. It is a
// module of its own so Helm's dependency versions never pin the root module's.
package helm
