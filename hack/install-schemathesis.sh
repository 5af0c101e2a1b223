#!/usr/bin/env bash
# schemathesis, the property-based HTTP API fuzzer that cortex/test/fuzz.int.test.ts runs against Cortex's OpenAPI
# document, in its own virtual environment (nothing is installed into the machine's Python).
#
#   venv    $REMRAM_CACHE/schemathesis-$SCHEMATHESIS_VERSION   from hack/schemathesis/requirements.txt, every
#           package pinned with its hashes (pip --require-hashes --only-binary: wheels only, nothing is built)
#   binary  $REMRAM_CACHE/bin/schemathesis (a link into the venv)
#   stamp   "schemathesis": the version, the lock file's hash and the Python that made the venv
# Cold: about 10 s and 95 MB (27 wheels from PyPI, plus the venv's own pip); warm: a stamp check.
COMPONENT=schemathesis
source "$(dirname "$0")/lib.sh"

lock="$HACK_DIR/schemathesis/requirements.txt"
venv="$REMRAM_CACHE/schemathesis-$SCHEMATHESIS_VERSION"
require_cmd python3 "the fuzzer's virtual environment is made with python3 -m venv (README prerequisites)"
grep -q "^schemathesis==$SCHEMATHESIS_VERSION " "$lock" ||
  die "$lock does not pin schemathesis==$SCHEMATHESIS_VERSION (regenerate it: see its header)"
python="$(python3 -c 'import sys; print(sys.executable, "%d.%d.%d" % sys.version_info[:3])')"
fingerprint="$SCHEMATHESIS_VERSION lock $(sha256sum "$lock" | cut -c1-16) python $python"

# Two setups at once (parallel clones sharing the cache) must not build the same venv.
exec 9>"$REMRAM_CACHE/stamps/schemathesis.lock"
flock 9

if stamp_matches schemathesis "$fingerprint" && [ -x "$venv/bin/schemathesis" ] &&
  [ "$(readlink "$REMRAM_BIN/schemathesis")" = "$venv/bin/schemathesis" ]; then
  log "schemathesis $SCHEMATHESIS_VERSION already installed at $venv"
  exit 0
fi

started=$SECONDS
log "installing schemathesis $SCHEMATHESIS_VERSION into $venv (pinned, hash-checked wheels from PyPI)"
python3 -c 'import ensurepip, venv' 2>/dev/null ||
  die "python3 cannot make a virtual environment: on Debian, apt-get install python3-venv"
rm -rf "$venv"
python3 -m venv "$venv" || die "python3 -m venv $venv failed"
# The machine's pip settings (PIP_FIND_LINKS, an index mirror) still apply; the hashes decide what is accepted.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  --require-hashes --only-binary :all: --no-deps -r "$lock" ||
  die "pip install of schemathesis $SCHEMATHESIS_VERSION failed: is PyPI reachable?"
version="$("$venv/bin/schemathesis" --version 2>&1)" || die "the installed schemathesis does not run: $version"
case "$version" in
  *"$SCHEMATHESIS_VERSION"*) ;;
  *) die "expected schemathesis $SCHEMATHESIS_VERSION, the venv has: $version" ;;
esac
ln -sfn "$venv/bin/schemathesis" "$REMRAM_BIN/schemathesis"
# Venvs of earlier pinned versions are dead weight.
for old in "$REMRAM_CACHE"/schemathesis-*; do
  [ "$old" = "$venv" ] || [ ! -d "$old" ] || rm -rf "$old"
done
write_stamp schemathesis "$fingerprint"
log "done in $((SECONDS - started))s: $REMRAM_BIN/schemathesis ($(du -sh "$venv" | cut -f1) in $venv)"
