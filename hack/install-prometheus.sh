#!/usr/bin/env bash
# Two commands of the Prometheus Go module: promtool (the rule checker and unit-test runner, for the chart's alert
# rule tests) and the Prometheus server, for the test that runs every dashboard panel's query against real scrapes
# (operator/test/dashboards.int.test.ts). The server is built with `remove_all_sd`: only static and file service
# discovery (the test names its targets), which leaves out every cloud SDK; no UI assets (the API is what is used).
#
#   binary  $REMRAM_CACHE/bin/promtool     stamp "promtool": PROMETHEUS_MODULE_VERSION
#   binary  $REMRAM_CACHE/bin/prometheus   stamp "prometheus": PROMETHEUS_MODULE_VERSION
COMPONENT=prometheus
source "$(dirname "$0")/lib.sh"

module="github.com/prometheus/prometheus"

build_command() { # NAME [GO-BUILD-FLAGS...]
  local name="$1"
  shift
  if stamp_matches "$name" "$PROMETHEUS_MODULE_VERSION" && [ -x "$REMRAM_BIN/$name" ]; then
    log "$name from prometheus $PROMETHEUS_MODULE_VERSION already built"
    return
  fi
  require_cmd go "$name is built from the Prometheus Go module (see README prerequisites)"
  local started=$SECONDS out
  log "building $name from $module@$PROMETHEUS_MODULE_VERSION (go install; a few minutes cold, ~1 min for the second)"
  out="$(mktemp -d)"
  CGO_ENABLED=0 GOBIN="$out" nice -n 10 go install "$@" -ldflags "-s -w" \
    "$module/cmd/$name@$PROMETHEUS_MODULE_VERSION" ||
    die "go install of $name failed: is the Go module proxy reachable?"
  mv -f "$out/$name" "$REMRAM_BIN/$name"
  rmdir "$out"
  "$REMRAM_BIN/$name" --version >/dev/null 2>&1 || die "the built $name does not run"
  write_stamp "$name" "$PROMETHEUS_MODULE_VERSION"
  log "done in $((SECONDS - started))s: $REMRAM_BIN/$name"
}

build_command promtool
build_command prometheus -tags remove_all_sd
