// Package install proves the packaging on a local cluster (pkg/localcluster):
// it installs the suite the way its documentation tells users to, runs the
// managers as the ServiceAccounts that install created, and checks what
// installing, upgrading and uninstalling parts of it does to users' objects.
// The managers' packaged Deployments land on the kwok node as fake pods; the
// real managers run as local processes authenticated as their ServiceAccounts,
// with their Deployments' env, as in test/e2e.
//
// The tests are behind the e2e build tag: `make test-e2e` runs
// `go test -tags e2e -p 1 ./test/e2e/ ./test/install/`. Unlike test/e2e, the
// cluster starts without the scheduler's CRDs (only the third-party ones):
// the packaging under test installs them. The cluster's state directory is
// removed after a passing run and kept after a failing one, or always with
// INSTALL_KEEP=1; its path is printed.
package install
