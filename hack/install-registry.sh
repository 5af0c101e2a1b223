#!/usr/bin/env bash
# The CNCF distribution registry, built from its Go module, for the test bed's model registry: Ollama pushes the
# test-bed models to it and pulls them back through it (see docs/testbed-models.md).
#
#   binary  $REMRAM_CACHE/bin/registry   stamp "registry": DISTRIBUTION_VERSION
COMPONENT=registry
source "$(dirname "$0")/lib.sh"

registry_bin="$REMRAM_BIN/registry"
module="github.com/distribution/distribution/v3"

if stamp_matches registry "$DISTRIBUTION_VERSION" && [ -x "$registry_bin" ]; then
  log "registry v$DISTRIBUTION_VERSION already built"
  exit 0
fi
require_cmd go "the registry is built from its Go module (go >= 1.26)"
started=$SECONDS
log "building registry v$DISTRIBUTION_VERSION from $module (go install, about 2 min cold)"
out="$(mktemp -d)"
# Without the version stamp the binary reports the module's placeholder version.
CGO_ENABLED=0 GOBIN="$out" nice -n 10 go install \
  -ldflags "-s -w -X $module/version.version=v$DISTRIBUTION_VERSION" \
  "$module/cmd/registry@v$DISTRIBUTION_VERSION" ||
  die "go install of $module/cmd/registry@v$DISTRIBUTION_VERSION failed: is the Go module proxy reachable?"
# Capture first: `grep -q` closing the pipe early would fail the pipeline under pipefail.
reported="$("$out/registry" --version 2>&1)" || die "the built registry does not run: $reported"
grep -qF "v$DISTRIBUTION_VERSION" <<<"$reported" || die "the built registry reports '$reported', expected v$DISTRIBUTION_VERSION"
mv -f "$out/registry" "$registry_bin"
rmdir "$out"
write_stamp registry "$DISTRIBUTION_VERSION"
log "done in $((SECONDS - started))s: $registry_bin"
