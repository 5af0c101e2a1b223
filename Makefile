# Remram — every target is listed by `make help`.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
REMRAM_CACHE ?= $(HOME)/.cache/remram
export REMRAM_CACHE
# Every target runs on the pinned Node from the cache (OpenClaw needs >= 24; the machine may have older).
export PATH := $(REMRAM_CACHE)/node/bin:$(REMRAM_CACHE)/bin:$(CURDIR)/node_modules/.bin:$(PATH)
export npm_config_update_notifier := false

.DEFAULT_GOAL := help
.PHONY: help setup deps images test test-unit test-integration test-real-node-full lint format typecheck demo lab-kwok bench infra-up infra-down crds kubectl-plugin

help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

setup: ## Idempotent install: Node, npm deps, OpenSearch, Kubernetes + a real node's parts, Ollama + models, OpenClaw, images
	bash hack/setup.sh

images: setup ## The container images (the last step of setup: buildah, mmdebstrap bases, incremental); archives in the cache's images/app/

deps: ## Install Node and the npm workspaces only (enough for lint and unit tests)
	bash hack/install-node.sh
	bash hack/install-npm-deps.sh

test: setup ## Setup, then every check: lint + types, unit tier, integration tier against the real test bed
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory test-unit
	$(MAKE) --no-print-directory test-integration

test-unit: ## Unit tier only (pure logic, nothing started)
	vitest run --project unit

test-integration: ## Integration tier only (starts and stops the real test bed itself)
	npm run --silent build:web -w app
	vitest run --project integration

test-real-node-full: setup ## The real-node appliance suite with its fault cases too (credential rotation, pods killed, operator killed mid-upgrade, node runtime restarted)
	REMRAM_TESTBED=node,registry REMRAM_REAL_NODE_FULL=1 vitest run --project integration operator/test/appliance-real-node.int.test.ts

lint: deps ## Biome (lint + format check), actionlint (.github/workflows), Cortex's layer rule (.dependency-cruiser.cjs), strict types
	bash hack/install-actionlint.sh
	biome check .
	actionlint
	depcruise --config .dependency-cruiser.cjs cortex/src
	tsc -b
	tsc -p tsconfig.tests.json

format: deps ## Apply Biome's formatting and safe fixes
	biome check --write .

typecheck: deps ## Strict TypeScript over every package, tests and benchmarks included
	tsc -b
	tsc -p tsconfig.tests.json

crds: deps ## Regenerate crds/*.yaml, the chart's copies and values.schema.json from the zod schemas, and its runbooks/
	npm run --silent crds -w operator

kubectl-plugin: deps ## kubectl remram for users: npm tarball, this platform's krew archive (one executable), krew manifest, in kubectl-remram/dist/release/
	rm -rf kubectl-remram/dist/release
	tsx kubectl-remram/src/cli.ts release --out kubectl-remram/dist/release

demo: setup ## The appliance on real pods: chart installed, appliance Ready, a conversation (stop: `make infra-down`)
	REMRAM_TESTBED=node,registry tsx test/harness/src/cli.ts up --demo
	tsx hack/lab/demo.ts

lab-kwok: setup ## The faster lab without real pods: Cortex and the operator as processes, an appliance on kwok nodes
	REMRAM_TESTBED=opensearch,ollama,kubernetes tsx test/harness/src/cli.ts up --demo
	tsx hack/lab/kwok-lab.ts

infra-up: setup ## Start the test bed in the background; endpoints go to .remram/env
	tsx test/harness/src/cli.ts up

infra-down: ## Stop everything infra-up started, by PID
	tsx test/harness/src/cli.ts down

bench: setup ## Benchmarks; machine-readable results under bench/results/
	tsx bench/run.ts
