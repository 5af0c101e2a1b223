#!/usr/bin/env bash
# The Prometheus server, built from the same Go module as promtool, for the test that runs every dashboard panel's
# query against real scrapes (operator/test/dashboards.int.test.ts). `remove_all_sd`: only static and file service
# discovery (the test names its targets), which leaves out every cloud SDK; no UI assets (the API is what is used).
#
#   binary  $REMRAM_CACHE/bin/prometheus   stamp "prometheus": PROMETHEUS_MODULE_VERSION
COMPONENT=prometheus
source "$(dirname "$0")/lib.sh"

command -v go >/dev/null || die "go is needed to build prometheus (see README prerequisites)"
if stamp_matches prometheus "$PROMETHEUS_MODULE_VERSION" && [ -x "$REMRAM_BIN/prometheus" ]; then
  log "prometheus $PROMETHEUS_MODULE_VERSION already built"
  exit 0
fi
started=$SECONDS
log "building prometheus from github.com/prometheus/prometheus@$PROMETHEUS_MODULE_VERSION (go install; ~1 min after promtool)"
out="$(mktemp -d)"
CGO_ENABLED=0 GOBIN="$out" nice -n 10 go install -tags remove_all_sd -ldflags "-s -w" \
  "github.com/prometheus/prometheus/cmd/prometheus@$PROMETHEUS_MODULE_VERSION" ||
  die "go install of prometheus failed: is the Go module proxy reachable?"
mv -f "$out/prometheus" "$REMRAM_BIN/prometheus"
rmdir "$out"
"$REMRAM_BIN/prometheus" --version >/dev/null 2>&1 || die "the built prometheus does not run"
write_stamp prometheus "$PROMETHEUS_MODULE_VERSION"
log "done in $((SECONDS - started))s: $REMRAM_BIN/prometheus"
