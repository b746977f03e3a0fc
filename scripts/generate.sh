#!/usr/bin/env bash
# Regenerates every generated file: deepcopy, OpenAPI definitions, typed
# clientset, listers, informers and applyconfigurations (k8s.io/code-generator),
# CRDs and per-manager RBAC (controller-gen), and the copies of those (and of
# the kustomize admission policies, NetworkPolicy and the Grafana dashboard)
# the Helm chart reads (scripts/chart-files). Generator versions are pinned in
# scripts/tools/go.mod.
#
#   scripts/generate.sh code        deepcopy, openapi, clients
#   scripts/generate.sh manifests   CRDs, RBAC and the chart's files/
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
module=opsnorth.io/scheduler
boilerplate=scripts/boilerplate.go.txt

controller_gen() { go tool -modfile=scripts/tools/go.mod controller-gen "$@"; }

code() {
  local codegen_dir
  # go list reports no Dir for a module not yet in the module cache (a fresh
  # machine): download it first.
  (cd scripts/tools && go mod download k8s.io/code-generator)
  codegen_dir=$(cd scripts/tools && go list -m -f '{{.Dir}}' k8s.io/code-generator)
  # shellcheck source=/dev/null
  source "$codegen_dir/kube_codegen.sh"

  kube::codegen::gen_helpers --boilerplate "$boilerplate" apis

  kube::codegen::gen_openapi \
    --output-dir generated/openapi \
    --output-pkg "$module/generated/openapi" \
    --extra-pkgs k8s.io/api/core/v1 \
    --extra-pkgs k8s.io/apimachinery/pkg/util/intstr \
    --report-filename scripts/api-rules/violation_exceptions.list \
    --update-report \
    --boilerplate "$boilerplate" \
    apis

  local schema
  schema=$(mktemp)
  trap 'rm -f "$schema"' RETURN
  go run ./scripts/models-schema >"$schema"

  kube::codegen::gen_client \
    --with-watch \
    --with-applyconfig \
    --applyconfig-openapi-schema "$schema" \
    --output-dir generated \
    --output-pkg "$module/generated" \
    --boilerplate "$boilerplate" \
    apis
}

manifests() {
  controller_gen crd:crdVersions=v1 paths=./apis/... output:crd:artifacts:config=manifests/crd
  go run ./scripts/crd-bounds manifests/crd/scheduler.opsnorth.io_*.yaml manifests/crd/ossa.ai_*.yaml
  local component
  for component in deployments tasks workflows; do
    rm -f "manifests/rbac/$component/role.yaml"
    controller_gen "rbac:roleName=opsnorth-scheduler-$component" \
      "paths=./pkg/$component/..." "output:rbac:artifacts:config=manifests/rbac/$component"
  done
  # Helm templates read only files inside the chart: copy what it serves.
  go run ./scripts/chart-files manifests/charts/opsnorth-scheduler
}

case "${1:-}" in
  code) code ;;
  manifests) manifests ;;
  *) echo "usage: $0 code|manifests" >&2; exit 2 ;;
esac
