#!/usr/bin/env bash
# Builds the kubectl-opsnorth archives for the platforms of its krew manifest
# and writes that manifest filled in: version, each archive's uri (BASE_URL
# plus its file name, where the release publishes it) and sha256.
#
#   scripts/plugin-release.sh VERSION BASE_URL [OUT_DIR]
#   scripts/plugin-release.sh v0.4.0 https://github.com/opsnorth/scheduler/releases/download/v0.4.0
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: $0 VERSION BASE_URL [OUT_DIR]}
base=${2:?usage: $0 VERSION BASE_URL [OUT_DIR]}
out=${3:-_output/release}
homepage=${HOMEPAGE:-https://github.com/opsnorth/scheduler}
mkdir -p "$out"
manifest=$(sed -e "s|RELEASE_VERSION|${version}|" -e "s|RELEASE_HOMEPAGE|${homepage}|" manifests/krew/opsnorth.yaml)
for platform in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
	os=${platform%/*} arch=${platform#*/}
	stage=$(mktemp -d)
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
		-ldflags "-s -w -X opsnorth.io/scheduler/pkg/manager.version=${version}" \
		-o "$stage/kubectl-opsnorth" ./cmd/kubectl-opsnorth
	archive="kubectl-opsnorth_${version}_${os}_${arch}.tar.gz"
	# Fixed owner and times: the same sources give the same archive and sum.
	tar -C "$stage" --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - kubectl-opsnorth | gzip -n > "$out/$archive"
	rm -rf "$stage"
	sum=$(sha256sum "$out/$archive" | cut -d' ' -f1)
	key=$(tr '[:lower:]' '[:upper:]' <<<"${os}_${arch}")
	manifest=$(sed -e "s|RELEASE_URI_${key}\$|${base}/${archive}|" -e "s|RELEASE_SHA256_${key}\$|${sum}|" <<<"$manifest")
	echo "$out/$archive $sum"
done
if grep -qE ":[[:space:]]*RELEASE_" <<<"$manifest"; then
	echo "placeholders left in the krew manifest" >&2
	exit 1
fi
printf '%s\n' "$manifest" > "$out/opsnorth.yaml"
echo "$out/opsnorth.yaml"
