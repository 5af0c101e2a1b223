#!/usr/bin/env bash
# Install everything the tests and the demo need. Idempotent: each installer checks its version stamp.
# Installers run one after another: the machine has 2 cores and the Go builds use both.
COMPONENT=setup
source "$(dirname "$0")/lib.sh"
started=$SECONDS
for step in node npm-deps opensearch opensearch-security kubernetes node-parts ollama registry openclaw prometheus s3proxy embedding-onnx chromium actionlint schemathesis images; do
  bash "$HACK_DIR/install-$step.sh"
done
log "setup complete in $((SECONDS - started))s (cache: $REMRAM_CACHE)"
