#!/usr/bin/env bash
# Chromium for remram-app's end-to-end tests: Debian's own package (no browser download from anywhere else), driven by
# Playwright (playwright-core, npm) over its DevTools protocol. Installed only when missing; the tests find it at
# /usr/bin/chromium (REMRAM_CHROMIUM names another).
#
#   apt     chromium (only when missing)
COMPONENT=chromium
source "$(dirname "$0")/lib.sh"

if command -v chromium >/dev/null 2>&1; then
  log "$(chromium --version 2>/dev/null | head -1) already installed"
  exit 0
fi
[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 ||
  die "chromium is missing and this is not root with apt-get: install Debian's chromium package (remram-app's browser tests drive it)"
started=$SECONDS
log "installing chromium (apt-get), for remram-app's browser tests"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 || {
  # A fresh machine has no package lists yet.
  DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
} || die "apt-get install chromium failed (run it by hand to see why)"
log "$(chromium --version 2>/dev/null | head -1) installed in $((SECONDS - started))s"
