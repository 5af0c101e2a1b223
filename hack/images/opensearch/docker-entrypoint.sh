#!/bin/bash
# Entry point of the test bed's OpenSearch image: like upstream's, every environment variable that looks like a
# setting (lower case with a dot, e.g. discovery.type=single-node) becomes an -E option, so the appliance's pod spec
# works unchanged. Upstream's security-plugin variables (DISABLE_SECURITY_PLUGIN, ...) have nothing to switch off:
# this image has no security plugin and always speaks plain HTTP.
set -euo pipefail
# Options alone (`-Ename=value`, `--version`) are for OpenSearch, as upstream's entry point treats them.
case "${1:-}" in -*) set -- opensearch "$@" ;; esac
if [ "${1:-}" = opensearch ]; then
  shift
  settings=()
  while IFS='=' read -r -d '' name value; do
    if [[ "$name" =~ ^[a-z0-9_]+\.[a-z0-9_]+ ]]; then settings+=("-E$name=$value"); fi
  done < <(env -0)
  exec /usr/share/opensearch/bin/opensearch "${settings[@]}" "$@"
fi
exec "$@"
