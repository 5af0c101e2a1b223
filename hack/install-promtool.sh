#!/usr/bin/env bash
# promtool (Prometheus's rule checker and unit-test runner) built from the Prometheus Go module, for the chart's
# alert rule tests.
#
#   binary  $REMRAM_CACHE/bin/promtool   stamp "promtool": PROMETHEUS_MODULE_VERSION
COMPONENT=promtool
source "$(dirname "$0")/lib.sh"

command -v go >/dev/null || die "go is needed to build promtool (see README prerequisites)"
if stamp_matches promtool "$PROMETHEUS_MODULE_VERSION" && [ -x "$REMRAM_BIN/promtool" ]; then
  log "promtool from prometheus $PROMETHEUS_MODULE_VERSION already built"
  exit 0
fi
started=$SECONDS
log "building promtool from github.com/prometheus/prometheus@$PROMETHEUS_MODULE_VERSION (go install, a few minutes cold)"
out="$(mktemp -d)"
CGO_ENABLED=0 GOBIN="$out" nice -n 10 go install -ldflags "-s -w" \
  "github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_MODULE_VERSION" ||
  die "go install of promtool failed: is the Go module proxy reachable?"
mv -f "$out/promtool" "$REMRAM_BIN/promtool"
rmdir "$out"
"$REMRAM_BIN/promtool" --version >/dev/null 2>&1 || die "the built promtool does not run"
write_stamp promtool "$PROMETHEUS_MODULE_VERSION"
log "done in $((SECONDS - started))s: $REMRAM_BIN/promtool"
