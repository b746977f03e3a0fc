# opsnorth scheduler: three managers (deployments, tasks, workflows) for the
# scheduler.opsnorth.io API. `make help` lists the targets.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X opsnorth.io/scheduler/pkg/manager.version=$(VERSION)
COMPONENTS := deployments tasks workflows
GENERATED_PATHS := generated manifests/crd manifests/rbac scripts/api-rules ':(glob)apis/**/zz_generated*'
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

.PHONY: build
build: ## Build the three manager binaries into bin/.
	@mkdir -p bin
	for c in $(COMPONENTS); do \
		CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o bin/$$c ./cmd/$$c; \
	done

.PHONY: lint
lint: ## gofmt, go vet and golangci-lint.
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [[ -n "$$unformatted" ]]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	go vet -tags e2e,chaos,bench ./...
	$(GOLANGCI_LINT) run --build-tags e2e,chaos,bench ./...

.PHONY: controlplane
controlplane: ## Build (once per machine) the cached control-plane binaries.
	scripts/controlplane.sh build all

.PHONY: test
test: ## Unit and integration tests (builds the control plane on first use).
	KUBEBUILDER_ASSETS="$$(scripts/controlplane.sh build envtest)" go test $(GO_TEST_FLAGS) ./...

.PHONY: test-unit
test-unit: ## Unit tests only (no control plane).
	go test $(GO_TEST_FLAGS) -short ./...

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
test-e2e: ## End-to-end tests on the local cluster, with the real Job, Deployment and garbage-collector controllers.
	scripts/controlplane.sh build all >/dev/null
	go test -tags e2e -count=1 -timeout 20m ./test/e2e/

.PHONY: chaos
chaos: ## Failure drills on the local cluster: bad-input corpus, leader kills, webhook outage, apiserver restart, mass deletion (figures in _output/chaos/summary.json).
	scripts/controlplane.sh build all >/dev/null
	go test -tags chaos -count=1 -timeout 25m ./test/chaos/

.PHONY: bench
bench: ## Benchmark the managers against baselines on the local cluster (table on stdout, JSON in _output/bench/). BENCH_FLAGS='--tasks=1000 --workflows=100'.
	scripts/controlplane.sh build all >/dev/null
	go run ./scripts/bench $(BENCH_FLAGS)
