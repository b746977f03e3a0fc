#!/usr/bin/env bash
# Builds (once per machine) and caches the helm binary the chart's end-to-end
# test installs with, from the helm.sh/helm/v4 module test/helm's go.mod
# names as a tool (no download of a release binary: only the Go module proxy
# is reachable here). Built inside that module, it compiles the same package
# versions test/helm's tests do, so each build reuses the other's cache.
#
#   scripts/helm.sh build   build it if missing, print the binary's path
#   scripts/helm.sh path    print the binary's path (may not exist yet)
#
# The cache lives outside the repository, beside the control plane's, keyed by
# the version: ${OPSNORTH_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/opsnorth-scheduler}/helm-<version>/.
# The build writes to a temporary name and renames on success, so an
# interrupted build never leaves a half-written binary behind. Keep
# HELM_VERSION equal to the helm.sh/helm/v4 version of test/helm/go.mod.
set -euo pipefail

HELM_VERSION=v4.3.2

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

cache_root=${OPSNORTH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/opsnorth-scheduler}
bin_dir="$cache_root/helm-$HELM_VERSION"
bin="$bin_dir/helm"

log() { printf 'helm: %s\n' "$*" >&2; }

build() {
  if [[ ! -x "$bin" ]]; then
    log "building helm $HELM_VERSION from test/helm's tool helm.sh/helm/v4/cmd/helm (first run on this machine only)"
    mkdir -p "$bin_dir"
    local start=$SECONDS tmp pkg=helm.sh/helm/v4/internal/version
    tmp=$(mktemp -d "$bin_dir/.build.XXXXXX")
    # The version variables helm's own Makefile sets; without them
    # `helm version` reports a bare "v4.3". Link flags only: the compiled
    # packages stay the ones test/helm's tests use.
    go build -C "$root/test/helm" -o "$tmp/helm" \
      -ldflags="-s -w -X $pkg.version=$HELM_VERSION -X $pkg.metadata= -X $pkg.gitTreeState=clean" \
      helm.sh/helm/v4/cmd/helm
    mv "$tmp/helm" "$bin"
    rmdir "$tmp"
    log "built helm in $((SECONDS - start))s"
  fi
  printf '%s\n' "$bin"
}

case "${1:-}" in
  build) build ;;
  path) printf '%s\n' "$bin" ;;
  *) echo "usage: $0 build | path" >&2; exit 2 ;;
esac
