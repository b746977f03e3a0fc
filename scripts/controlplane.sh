#!/usr/bin/env bash
# Builds (once per machine) and caches the control-plane binaries the tests and
# the local suite run: kube-apiserver, kube-controller-manager, kube-scheduler,
# kubectl (k8s.io/kubernetes), etcd (go.etcd.io/etcd/server/v3) and kwok, and
# kubelet-env (scripts/controlplane/kube/kubelet-env: the kubelet's own env
# expansion, for tests of what an agent sees where kwok runs no process).
#
#   scripts/controlplane.sh build   build what is missing, print the binary dir
#   scripts/controlplane.sh dir     print the binary dir (may not exist yet)
#
# The cache lives outside the repository, keyed by the pinned versions, so a
# version bump rebuilds and an unchanged pin never does. Override its root with
# OPSNORTH_CACHE_DIR. Builds write to a temporary name and rename on success,
# so an interrupted build never leaves a half-written binary behind.
set -euo pipefail

K8S_VERSION=v1.37.2
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${OPSNORTH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/opsnorth-scheduler}
bin_dir="$cache_root/controlplane/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION"

log() { printf 'controlplane: %s\n' "$*" >&2; }

k8s_ldflags() {
  local major minor
  major=${K8S_VERSION#v}; major=${major%%.*}
  minor=${K8S_VERSION#v*.}; minor=${minor%%.*}
  local ld="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    ld+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  printf '%s' "$ld"
}

# build_one NAME MODULE_DIR PACKAGE [LDFLAGS]
build_one() {
  local name=$1 dir=$2 pkg=$3 ldflags=${4:--s -w}
  [[ -x "$bin_dir/$name" ]] && return 0
  log "building $name from $pkg (first run on this machine only)"
  local start=$SECONDS
  (cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" -o "$bin_dir/.$name.tmp" "$pkg")
  mv "$bin_dir/.$name.tmp" "$bin_dir/$name"
  log "built $name in $((SECONDS - start))s"
}

build_kwok() {
  [[ -x "$bin_dir/kwok" ]] && return 0
  log "building kwok $KWOK_VERSION (first run on this machine only)"
  local start=$SECONDS tmp
  tmp=$(mktemp -d "$bin_dir/.kwok.XXXXXX")
  GOBIN="$tmp" CGO_ENABLED=0 GOFLAGS=-trimpath go install -ldflags="-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  mv "$tmp/kwok" "$bin_dir/kwok"
  rmdir "$tmp"
  log "built kwok in $((SECONDS - start))s"
}

build() {
  mkdir -p "$bin_dir"
  local ld
  ld=$(k8s_ldflags)
  # kube-apiserver first: envtest needs only it and etcd.
  build_one kube-apiserver "$here/controlplane/kube" k8s.io/kubernetes/cmd/kube-apiserver "$ld"
  build_one etcd "$here/controlplane/etcd" go.etcd.io/etcd/server/v3
  if [[ "${1:-all}" == all ]]; then
    build_one kube-controller-manager "$here/controlplane/kube" k8s.io/kubernetes/cmd/kube-controller-manager "$ld"
    build_one kube-scheduler "$here/controlplane/kube" k8s.io/kubernetes/cmd/kube-scheduler "$ld"
    build_one kubectl "$here/controlplane/kube" k8s.io/kubernetes/cmd/kubectl "$ld"
    build_one kubelet-env "$here/controlplane/kube" ./kubelet-env "-s -w"
    build_kwok
  fi
  printf '%s\n' "$bin_dir"
}

case "${1:-}" in
  build) build "${2:-all}" ;;
  dir) printf '%s\n' "$bin_dir" ;;
  *) echo "usage: $0 build [envtest|all] | dir" >&2; exit 2 ;;
esac
