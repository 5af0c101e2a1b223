# Shared helpers for the installers in hack/. Source it; do not run it.
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$HACK_DIR/.." && pwd)"
# shellcheck source=versions.env
source "$HACK_DIR/versions.env"

export REMRAM_CACHE="${REMRAM_CACHE:-$HOME/.cache/remram}"
export REMRAM_BIN="$REMRAM_CACHE/bin"
export GOMODCACHE="${GOMODCACHE_OVERRIDE:-$REMRAM_CACHE/go/mod}"
export GOCACHE="${GOCACHE_OVERRIDE:-$REMRAM_CACHE/go/build}"
export GOFLAGS="-trimpath -mod=mod"
export GOTOOLCHAIN=local
mkdir -p "$REMRAM_BIN" "$REMRAM_CACHE/stamps"
# The pinned Node (once installed) runs every script, also when an installer is run by hand.
export PATH="$REMRAM_CACHE/node/bin:$PATH"

log() { printf '[remram %s] %s\n' "${COMPONENT:-setup}" "$*" >&2; }
die() { printf '[remram %s] ERROR: %s\n' "${COMPONENT:-setup}" "$*" >&2; exit 1; }

# A stamp records the exact version an installer finished with; a matching stamp means "already installed".
stamp_matches() { [ -f "$REMRAM_CACHE/stamps/$1" ] && [ "$(cat "$REMRAM_CACHE/stamps/$1")" = "$2" ]; }
write_stamp() { printf '%s' "$2" >"$REMRAM_CACHE/stamps/$1"; }

require_cmd() { command -v "$1" >/dev/null 2>&1 || die "'$1' is required: $2"; }

# Time a step and report it, so slow cold installs are visible in CI logs.
timed() {
  local started=$SECONDS
  "$@"
  log "done in $((SECONDS - started))s"
}
