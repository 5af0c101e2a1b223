#!/usr/bin/env bash
# npm workspaces from package-lock.json; skipped when the lock has not changed since the last install.
# `npm install` rather than `npm ci`: the registry this machine reaches lacks some foreign-platform optional
# packages (e.g. @biomejs/cli-win32-x64), which `npm ci` treats as a lock mismatch. We still refuse a run that
# would change the lock, so installs stay reproducible.
COMPONENT=npm
source "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"
lock_hash="$(sha256sum package-lock.json | cut -c1-16)-$(node --version)"
if [ -f node_modules/.remram-lock-hash ] && [ "$(cat node_modules/.remram-lock-hash)" = "$lock_hash" ]; then
  log "node_modules up to date"; exit 0
fi
log "npm install (from package-lock.json)"
cp package-lock.json "$REMRAM_CACHE/package-lock.before.json"
npm install --no-audit --no-fund --loglevel=error || die "npm install failed"
cmp -s package-lock.json "$REMRAM_CACHE/package-lock.before.json" \
  || die "npm install changed package-lock.json: commit an updated lock (run npm install and review the diff)"
printf '%s' "$lock_hash" > node_modules/.remram-lock-hash
