#!/usr/bin/env bash
# Builds (once per machine) and caches the Kueue manager (sigs.k8s.io/kueue's
# cmd/kueue, the binary of Kueue's release image) and Kueue's CRDs, for tests
# that run the real Kueue against the local cluster (pkg/localcluster
# StartKueue). Built from the Go module at a pinned version (no download of a
# release image or binary: only the Go module proxy is reachable here).
# Kueue's go.mod has no replace directives, so `go install module@version`
# builds it with exactly the dependency versions Kueue pins; no build module
# of ours is needed.
#
#   scripts/kueue.sh build   build it if missing, print the binary's path
#   scripts/kueue.sh path    print the binary's path (may not exist yet)
#
# Kueue's CRDs (the module's config/components/crd/bases) are copied to crds/
# beside the binary. The cache lives outside the repository, beside the
# control plane's, keyed by the version:
# ${OPSNORTH_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/opsnorth-scheduler}/kueue-<version>/.
# The build writes to a temporary directory and renames on success (the CRDs
# first, the binary last), so an interrupted build never leaves a
# half-written binary behind, and a binary in place means its CRDs are too.
set -euo pipefail

KUEUE_VERSION=v0.17.0

cache_root=${OPSNORTH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/opsnorth-scheduler}
bin_dir="$cache_root/kueue-$KUEUE_VERSION"
bin="$bin_dir/kueue"

log() { printf 'kueue: %s\n' "$*" >&2; }

build() {
  if [[ ! -x "$bin" ]]; then
    log "building kueue $KUEUE_VERSION from sigs.k8s.io/kueue/cmd/kueue (first run on this machine only)"
    mkdir -p "$bin_dir"
    local start=$SECONDS tmp src pkg=sigs.k8s.io/kueue/pkg/version
    tmp=$(mktemp -d "$bin_dir/.build.XXXXXX")
    # The module's source, for the CRDs (go install downloads it anyway).
    src=$(go mod download -json "sigs.k8s.io/kueue@$KUEUE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    [[ -d "$src/config/components/crd/bases" ]] || { log "no CRDs in the module source ($src)"; exit 1; }
    mkdir "$tmp/crds"
    cp "$src"/config/components/crd/bases/*.yaml "$tmp/crds/"
    chmod u+w "$tmp"/crds/*.yaml
    # The version variable Kueue's Makefile sets (its startup log prints it);
    # the commit and build date keep Kueue's placeholders: the module proxy
    # does not say which commit the tag is.
    GOBIN="$tmp" CGO_ENABLED=0 GOFLAGS=-trimpath go install \
      -ldflags="-s -w -X $pkg.GitVersion=$KUEUE_VERSION" \
      "sigs.k8s.io/kueue/cmd/kueue@$KUEUE_VERSION"
    rm -rf "$bin_dir/crds"
    mv "$tmp/crds" "$bin_dir/crds"
    mv "$tmp/kueue" "$bin"
    rmdir "$tmp"
    log "built kueue in $((SECONDS - start))s"
  fi
  printf '%s\n' "$bin"
}

case "${1:-}" in
  build) build ;;
  path) printf '%s\n' "$bin" ;;
  *) echo "usage: $0 build | path" >&2; exit 2 ;;
esac
