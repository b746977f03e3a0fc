// Package chaos holds the failure drills of the scheduler on the embedded
// local cluster (pkg/localcluster): a bad-input corpus through kubectl,
// leader kills mid-burst with two replicas of every manager, a webhook
// receiver outage, a kube-apiserver restart and a mass deletion of
// UserDeployments. They are behind the chaos build tag:
// `make chaos` runs `go test -tags chaos ./test/chaos/`.
//
// Every figure is logged and written to _output/chaos/summary.json. The
// cluster's state directory is kept after a failing run, or always with
// CHAOS_KEEP=1; its path is printed.
package chaos
