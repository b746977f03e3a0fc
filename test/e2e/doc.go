// Package e2e holds end-to-end tests on the embedded local cluster
// (pkg/localcluster): real kube-controller-manager and kube-scheduler, with
// kwok playing the kubelet. They are behind the e2e build tag so `make test`
// does not run them twice: `make test-e2e` runs `go test -tags e2e ./test/e2e/`.
//
// The cluster's state directory (logs of every component, kubeconfigs) is
// removed after a passing run and kept after a failing one, or always with
// E2E_KEEP=1; its path is printed.
package e2e
