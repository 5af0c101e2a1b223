#!/usr/bin/env bash
# npm workspaces from package-lock.json with `npm ci`: exactly the locked versions and integrity hashes, and a
# failure (never a rewrite) when the lock and package.json disagree. The lock check first proves the lock is
# complete for every platform npm records (the registry may add platform packages to a published version);
# it is cheap, so it runs even when node_modules is up to date.
COMPONENT=npm
source "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"
node test/harness/src/npm-lock.ts package-lock.json || die "package-lock.json is incomplete (see above)"
lock_hash="$(sha256sum package-lock.json package.json ./*/package.json test/harness/package.json | sha256sum | cut -c1-16)-$(node --version)"
# Cortex's source imports @remram/contract, which resolves to the contract's build (contract/dist) wherever tsx
# runs it (the harness, bench, hack/lab). tsc -b is incremental, so this runs every time: quick when nothing changed.
build_contract() { node_modules/.bin/tsc -b contract || die "building the contract (tsc -b contract) failed"; }
if [ -f node_modules/.remram-lock-hash ] && [ "$(cat node_modules/.remram-lock-hash)" = "$lock_hash" ]; then
  build_contract
  log "node_modules up to date"; exit 0
fi
# onnxruntime-node ships its CPU runtime in the package; its install script would fetch CUDA providers from NuGet,
# which Cortex does not use (and this machine cannot reach).
export ONNXRUNTIME_NODE_INSTALL=skip
log "npm ci (from package-lock.json)"
npm ci --no-audit --no-fund --loglevel=error \
  || die "npm ci failed: if it says the lock is out of sync, run npm install, review the package-lock.json diff and commit it"
printf '%s' "$lock_hash" > node_modules/.remram-lock-hash
log "building the contract (contract/dist)"
build_contract
