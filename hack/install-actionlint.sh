#!/usr/bin/env bash
# actionlint, the checker of the GitHub Actions workflows in .github/workflows (`make lint` runs it), built from its
# Go module. It runs shellcheck on every `run:` script when shellcheck is on PATH: Debian's package, installed here
# when apt-get can (REMRAM_NO_SHELLCHECK=1 skips it; actionlint then checks the workflows without it).
#
#   binary  $REMRAM_CACHE/bin/actionlint   stamp "actionlint": ACTIONLINT_VERSION
#   apt     shellcheck (only when missing)
COMPONENT=actionlint
source "$(dirname "$0")/lib.sh"

actionlint_bin="$REMRAM_BIN/actionlint"
module="github.com/rhysd/actionlint"

install_shellcheck() {
  command -v shellcheck >/dev/null 2>&1 && return
  if [ "${REMRAM_NO_SHELLCHECK:-}" = 1 ] || [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    log "shellcheck is not installed: actionlint checks the workflows without linting their run: scripts"
    return
  fi
  local started=$SECONDS
  log "installing shellcheck (apt-get), for actionlint's checks of run: scripts"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends shellcheck >/dev/null 2>&1 || {
    # A fresh machine has no package lists yet.
    DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends shellcheck >/dev/null
  } || die "apt-get install shellcheck failed (REMRAM_NO_SHELLCHECK=1 skips it)"
  log "shellcheck $(shellcheck --version | sed -n 's/^version: //p') installed in $((SECONDS - started))s"
}
install_shellcheck

if stamp_matches actionlint "$ACTIONLINT_VERSION" && [ -x "$actionlint_bin" ]; then
  log "actionlint v$ACTIONLINT_VERSION already built"
  exit 0
fi
require_cmd go "actionlint is built from its Go module (see README prerequisites)"
started=$SECONDS
log "building actionlint v$ACTIONLINT_VERSION from $module (go install)"
out="$(mktemp -d)"
# `go install module@version` records the version in the build info, which `actionlint -version` reports.
CGO_ENABLED=0 GOBIN="$out" nice -n 10 go install -ldflags "-s -w" \
  "$module/cmd/actionlint@v$ACTIONLINT_VERSION" ||
  die "go install of $module/cmd/actionlint@v$ACTIONLINT_VERSION failed: is the Go module proxy reachable?"
# Capture first: `grep -q` closing the pipe early would fail the pipeline under pipefail.
reported="$("$out/actionlint" -version 2>&1)" || die "the built actionlint does not run: $reported"
grep -qF "$ACTIONLINT_VERSION" <<<"$reported" ||
  die "the built actionlint reports '$reported', expected v$ACTIONLINT_VERSION"
mv -f "$out/actionlint" "$actionlint_bin"
rmdir "$out"
write_stamp actionlint "$ACTIONLINT_VERSION"
log "done in $((SECONDS - started))s: $actionlint_bin"
