# opsnorth scheduler: three managers (deployments, tasks, workflows) for the
# scheduler.opsnorth.io API. `make help` lists the targets.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X opsnorth.io/scheduler/pkg/manager.version=$(VERSION)
COMPONENTS := deployments tasks workflows
GENERATED_PATHS := generated manifests/crd manifests/rbac scripts/api-rules ':(glob)apis/**/zz_generated*' \
	manifests/charts/opsnorth-scheduler/files manifests/charts/opsnorth-scheduler/Chart.yaml
# Go modules of their own (their dependencies must not pin the root module's):
# `go test ./...` at the root skips them, so test, lint and verify name them.
NESTED_MODULES := test/helm
GO_TEST_FLAGS ?= -count=1 -timeout=30m
GOLANGCI_LINT := go tool -modfile=scripts/lint/go.mod golangci-lint

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: generate
generate: ## Regenerate deepcopy, OpenAPI, clientset, listers, informers, applyconfigurations.
	scripts/generate.sh code

.PHONY: manifests
manifests: ## Regenerate CRDs (manifests/crd) and per-manager RBAC (manifests/rbac).
	scripts/generate.sh manifests

.PHONY: verify
verify: generate manifests ## Regenerate everything and fail if the tree changed.
	@if [[ -n "$$(git status --porcelain -- $(GENERATED_PATHS) go.mod go.sum)" ]]; then \
		echo "generated files are out of date; run 'make generate manifests' and commit:"; \
		git status --porcelain -- $(GENERATED_PATHS) go.mod go.sum; \
		git --no-pager diff --stat -- $(GENERATED_PATHS); \
		exit 1; \
	fi
	@for m in $(NESTED_MODULES); do \
		(cd $$m && go mod tidy -diff) || { echo "$$m/go.mod or go.sum is not tidy: run 'cd $$m && go mod tidy' and commit"; exit 1; }; \
	done

.PHONY: build
build: ## Build the three manager binaries and the kubectl plugin into bin/.
	@mkdir -p bin
	for c in $(COMPONENTS); do \
		CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o bin/$$c ./cmd/$$c; \
	done
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o bin/kubectl-opsnorth ./cmd/kubectl-opsnorth

.PHONY: plugin-release
plugin-release: ## kubectl-opsnorth archives for krew's platforms and the filled-in krew manifest, in _output/release. VERSION=v… RELEASE_URL=<where the archives are published>.
	scripts/plugin-release.sh $(VERSION) $(RELEASE_URL)

.PHONY: lint
lint: ## gofmt, go vet and golangci-lint.
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [[ -n "$$unformatted" ]]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	go vet -tags e2e,chaos,bench ./...
	$(GOLANGCI_LINT) run --build-tags e2e,chaos,bench ./...
	for m in $(NESTED_MODULES); do \
		(cd $$m && go vet ./... && go tool -modfile=$(CURDIR)/scripts/lint/go.mod golangci-lint run ./...); \
	done

.PHONY: controlplane
controlplane: ## Build (once per machine) the cached control-plane binaries.
	scripts/controlplane.sh build all

.PHONY: helm
helm: ## Build (once per machine) the cached helm binary the chart's e2e test installs with; prints its path.
	scripts/helm.sh build

.PHONY: kueue
kueue: ## Build (once per machine) the cached Kueue manager and its CRDs, for the tests that run the real Kueue; prints its path.
	scripts/kueue.sh build

.PHONY: test
test: ## Unit and integration tests (builds the control plane on first use), the Helm chart's (test/helm) included.
	assets="$$(scripts/controlplane.sh build envtest)"; \
	KUBEBUILDER_ASSETS="$$assets" go test $(GO_TEST_FLAGS) ./...; \
	for m in $(NESTED_MODULES); do (cd $$m && KUBEBUILDER_ASSETS="$$assets" go test $(GO_TEST_FLAGS) ./...); done

.PHONY: test-unit
test-unit: ## Unit tests only (no control plane).
	go test $(GO_TEST_FLAGS) -short ./...
	for m in $(NESTED_MODULES); do (cd $$m && go test $(GO_TEST_FLAGS) -short ./...); done

# run builds the command and execs it rather than `go run` it: go run exits 1
# after a Ctrl-C whatever the command returns, so make would report an error.
.PHONY: run
run: ## Run the local cluster (etcd, apiserver, controllers, scheduler, kwok node) with the CRDs; Ctrl-C stops it. RUN_FLAGS='--keep --pod-delay=5s'.
	@start=$$SECONDS; echo "run: control-plane binaries (built once per machine, about 20 minutes on 2 cores)..."; \
	dir=$$(scripts/controlplane.sh build all); echo "run: control plane in $$dir ($$((SECONDS - start))s)"
	@start=$$SECONDS; echo "run: go build ./scripts/localcluster (minutes on a cold build cache)..."; \
	go build -o _output/bin/localcluster ./scripts/localcluster; echo "run: built in $$((SECONDS - start))s"
	@exec _output/bin/localcluster $(RUN_FLAGS)

.PHONY: test-e2e
# Each package starts its own local cluster: -p 1 runs them one after the
# other (-timeout is per package).
test-e2e: ## End-to-end tests on the local cluster (test/e2e), with the real Job, Deployment and garbage-collector controllers and Kueue, and the install tests (test/install).
	scripts/controlplane.sh build all >/dev/null
	scripts/kueue.sh build >/dev/null
	go test -tags e2e -count=1 -p 1 -timeout 20m ./test/e2e/ ./test/install/

.PHONY: chaos
chaos: ## Failure drills on the local cluster: bad-input corpus, leader kills, webhook outage, apiserver restart, mass deletion (figures in _output/chaos/summary.json).
	scripts/controlplane.sh build all >/dev/null
	go test -tags chaos -count=1 -timeout 25m ./test/chaos/

.PHONY: bench
bench: ## Benchmark the managers against baselines on the local cluster (table on stdout, JSON in _output/bench/). BENCH_FLAGS='--tasks=1000 --workflows=100'.
	scripts/controlplane.sh build all >/dev/null
	go run ./scripts/bench $(BENCH_FLAGS)
