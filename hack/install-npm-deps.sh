#!/usr/bin/env bash
# npm workspaces from package-lock.json; skipped when the lock has not changed since the last install.
COMPONENT=npm
source "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"
lock_hash="$(sha256sum package-lock.json | cut -c1-16)-$(node --version)"
if [ -f node_modules/.remram-lock-hash ] && [ "$(cat node_modules/.remram-lock-hash)" = "$lock_hash" ]; then
  log "node_modules up to date"; exit 0
fi
log "npm ci"
npm ci --no-audit --no-fund --loglevel=error || die "npm ci failed"
printf '%s' "$lock_hash" > node_modules/.remram-lock-hash
