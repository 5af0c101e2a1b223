# Remram — every target is listed by `make help`.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
REMRAM_CACHE ?= $(HOME)/.cache/remram
export REMRAM_CACHE
# Every target runs on the pinned Node from the cache (OpenClaw needs >= 24; the machine may have older).
export PATH := $(REMRAM_CACHE)/node/bin:$(REMRAM_CACHE)/bin:$(CURDIR)/node_modules/.bin:$(PATH)
export npm_config_update_notifier := false

.DEFAULT_GOAL := help
.PHONY: help setup deps images test test-unit test-integration lint format typecheck demo bench infra-up infra-down crds

help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

setup: ## Idempotent install: Node, npm deps, OpenSearch, Kubernetes + a real node's parts, Ollama + models, OpenClaw
	bash hack/setup.sh

images: setup ## Build the container images (buildah, mmdebstrap bases, incremental); archives in the cache's images/app/
	bash hack/install-images.sh

deps: ## Install Node and the npm workspaces only (enough for lint and unit tests)
	bash hack/install-node.sh
	bash hack/install-npm-deps.sh

test: images ## Setup and images, then every check: lint + types, unit tier, integration tier against the real test bed
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory test-unit
	$(MAKE) --no-print-directory test-integration

test-unit: ## Unit tier only (pure logic, nothing started)
	vitest run --project unit

test-integration: ## Integration tier only (starts and stops the real test bed itself)
	vitest run --project integration

lint: deps ## Biome (lint + format check) and a strict type check of every package, tests and benchmarks included
	biome check .
	tsc -b
	tsc -p tsconfig.tests.json

format: deps ## Apply Biome's formatting and safe fixes
	biome check --write .

typecheck: deps ## Strict TypeScript over every package, tests and benchmarks included
	tsc -b
	tsc -p tsconfig.tests.json

crds: deps ## Regenerate crds/*.yaml and the chart's copies from the zod schemas in operator/src/api
	npm run --silent crds -w operator

demo: images ## The appliance lab: test bed, Cortex and the operator reconciling an appliance (stop: `make infra-down`)
	tsx test/harness/src/cli.ts up --demo
	tsx hack/lab/demo.ts

infra-up: images ## Start the test bed in the background (podman's service reads the images); endpoints go to .remram/env
	tsx test/harness/src/cli.ts up

infra-down: ## Stop everything infra-up started, by PID
	tsx test/harness/src/cli.ts down

bench: setup ## Benchmarks; machine-readable results under bench/results/
	tsx bench/run.ts
