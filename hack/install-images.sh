#!/usr/bin/env bash
# Container images of the appliance, built with buildah from the Dockerfiles in the repository, on bases made here by
# mmdebstrap (or scratch): no Docker engine, no image registry. The last step of `make setup` (`make images`).
#
#   tools     podman buildah mmdebstrap runc containernetworking-plugins busybox-static   Debian, only what is missing
#   config    $REMRAM_CACHE/containers/{containers,storage,registries}.conf, read through CONTAINERS_CONF,
#             CONTAINERS_STORAGE_CONF and CONTAINERS_REGISTRIES_CONF: nothing is written to /etc/containers
#   bases     localhost/remram-base:bookworm        mmdebstrap minbase, merged /usr, this machine's apt sources
#             localhost/remram-jre:17               hack/images/jre/Dockerfile (Debian's openjdk-17-jre-headless)
#             localhost/remram-node:$NODE_VERSION   hack/images/node/Dockerfile (the cache's node and npm)
#             localhost/remram-busybox:<version>    hack/images/busybox/Dockerfile (Debian's busybox-static)
#   images    localhost/remram/{operator,cortex,hooks,app}:<package version>    operator/, cortex/, hooks/, app/Dockerfile
#             localhost/remram/openclaw-gateway:$OPENCLAW_VERSION           hack/gateway/Dockerfile
#             localhost/remram/opensearch:$OPENSEARCH_VERSION               hack/opensearch/Dockerfile (stand-in)
#             localhost/remram/ollama:$OLLAMA_VERSION                       hack/ollama/Dockerfile (stand-in)
#             localhost/remram/{operator,cortex,hooks}:previous-<commit>     the previous release's (UPGRADE_FROM_COMMIT)
#   archives  $REMRAM_CACHE/images/app/<name>.tar (docker-archive); $REMRAM_CACHE/images/app/images.env names them
#
# Incremental: an image's stamp (images-<name>) hashes its Dockerfile, its build options, its base's image ID and the
# exact build context, which is assembled per image from hard links; with a matching stamp and the image present
# nothing is built. Every build and run uses the host network: no podman bridge, iptables rule or ip_forward change.
# shellcheck disable=SC2016  # single-quoted $...: expanded later, inside a container or an mmdebstrap hook
COMPONENT=images
source "$(dirname "$0")/lib.sh"

containers_dir="$REMRAM_CACHE/containers"
app_dir="$REMRAM_CACHE/images/app"
contexts_dir="$containers_dir/contexts"
logs_dir="$containers_dir/logs"
debian_packages=(podman buildah mmdebstrap runc containernetworking-plugins busybox-static)
host_ca=/etc/ssl/certs/ca-certificates.crt
system_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

[ "$(id -u)" = 0 ] ||
  die "building images needs root (mmdebstrap's root mode, rootful podman storage; rootless podman needs subuid ranges): run 'make images' as root"

exec 9>"$REMRAM_CACHE/stamps/images.lock"
flock -n 9 || die "another hack/install-images.sh holds $REMRAM_CACHE/stamps/images.lock: wait for it to finish"

# ---- Tools.
install_debian_packages() {
  local missing=() package
  for package in "${debian_packages[@]}"; do
    [ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" = "install ok installed" ] || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return
  log "installing ${missing[*]} (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq || die "apt-get update failed: check the apt sources and the network"
  # No recommends: they would pull in slirp4netns, fuse-overlayfs, dbus-user-session, ... which rootful builds do not use.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    die "apt-get install ${missing[*]} failed (run it by hand to see why)"
}
install_debian_packages
# The containers-common package installs the default signature policy; without it every import and build is refused.
[ -f /etc/containers/policy.json ] ||
  die "/etc/containers/policy.json is missing (it belongs to the containers-common package): apt-get install --reinstall golang-github-containers-common"

# ---- Private configuration. Written only when its content changes; podman and buildah both read these variables.
mkdir -p "$containers_dir"/{storage,run,tmp,libpod-tmp,cni} "$logs_dir" "$app_dir"
write_if_changed() { # FILE CONTENT
  if [ ! -f "$1" ] || [ "$(cat "$1")" != "$2" ]; then printf '%s\n' "$2" >"$1"; fi
}
# runc keeps container state under --root, /run/runc by default: the wrapper moves it into the cache.
mkdir -p "$containers_dir/bin" "$containers_dir/runc"
write_if_changed "$containers_dir/bin/runc" "#!/bin/sh
# Written by hack/install-images.sh: runc with its state in the cache instead of /run/runc.
exec /usr/sbin/runc --root '$containers_dir/runc' \"\$@\""
chmod +x "$containers_dir/bin/runc"
write_if_changed "$containers_dir/containers.conf" "# Written by hack/install-images.sh; podman and buildah read it through CONTAINERS_CONF.
[containers]
# podman's default RLIMIT_NOFILE and RLIMIT_NPROC exceed this machine's hard limits (\"error setting rlimit type 7\",
# then \"type 6\"); 20000 open files is the ceiling here, pass --ulimit for more than 1024.
default_ulimits = [\"nofile=1024:1024\", \"nproc=1024:1024\"]
# The host network unless a command asks otherwise: no bridge, no iptables rules, no ip_forward change.
netns = \"host\"
# conmon stays out of cgroups (runc cannot run without them: \"disabled\" is refused), so no libpod_parent/conmon is left.
cgroups = \"no-conmon\"
[engine]
runtime = \"runc\"
cgroup_manager = \"cgroupfs\"
events_logger = \"file\"
events_logfile_path = \"$containers_dir/events.log\"
tmp_dir = \"$containers_dir/libpod-tmp\"
image_copy_tmp_dir = \"$containers_dir/tmp\"
[engine.runtimes]
runc = [\"$containers_dir/bin/runc\"]
[network]
network_backend = \"cni\"
network_config_dir = \"$containers_dir/cni\"
cni_plugin_dirs = [\"/usr/lib/cni\"]"
write_if_changed "$containers_dir/storage.conf" "# Written by hack/install-images.sh; read through CONTAINERS_STORAGE_CONF.
[storage]
driver = \"overlay\"
graphroot = \"$containers_dir/storage\"
runroot = \"$containers_dir/run\""
write_if_changed "$containers_dir/registries.conf" "# Written by hack/install-images.sh; read through CONTAINERS_REGISTRIES_CONF.
# No search registries: an unqualified name (a Dockerfile built without BASE=...) fails at once instead of pulling.
unqualified-search-registries = []"
export CONTAINERS_CONF="$containers_dir/containers.conf"
export CONTAINERS_STORAGE_CONF="$containers_dir/storage.conf"
export CONTAINERS_REGISTRIES_CONF="$containers_dir/registries.conf"

# ---- The host must look the same afterwards (checked on every exit, also after a failure): podman and buildah still
# write a few things outside their configured directories.
ip_forward_before="$(cat /proc/sys/net/ipv4/ip_forward)"
bridge_before=false
ip link show cni-podman0 >/dev/null 2>&1 && bridge_before=true
# containers/image keeps its blob-info cache in /var/lib/containers/cache for root, whatever the configuration says.
var_lib_containers_before=false
[ -e /var/lib/containers ] && var_lib_containers_before=true
# Every container's cgroup goes under libpod_parent (cgroup v1: one per controller); runc removes the container's own.
cgroup_parents_before="$(ls -d /sys/fs/cgroup/*/libpod_parent 2>/dev/null || true)"
check_host_network() {
  local now dir
  now="$(cat /proc/sys/net/ipv4/ip_forward)"
  if [ "$now" != "$ip_forward_before" ]; then
    echo "$ip_forward_before" >/proc/sys/net/ipv4/ip_forward
    log "net.ipv4.ip_forward changed to $now during the run: restored $ip_forward_before"
  fi
  if ! $bridge_before && ip link show cni-podman0 >/dev/null 2>&1; then
    ip link delete cni-podman0 && log "podman created the bridge cni-podman0: removed it"
  fi
  if ! $var_lib_containers_before && [ -d /var/lib/containers ]; then
    rm -f /var/lib/containers/cache/blob-info-cache-v1.boltdb
    rmdir /var/lib/containers/cache /var/lib/containers 2>/dev/null ||
      log "left /var/lib/containers in place: it holds more than the blob-info cache this run wrote"
  fi
  # rmdir removes a cgroup only when no process and no child cgroup is left in it.
  for dir in /sys/fs/cgroup/*/libpod_parent; do
    if [ -d "$dir" ] && [[ "$cgroup_parents_before" != *"$dir"* ]]; then rmdir "$dir"/conmon "$dir" 2>/dev/null || true; fi
  done
  return 0
}
trap check_host_network EXIT

# ---- Helpers.
# A content hash of a directory tree: paths, types, modes, link targets and file contents (not owners or times).
tree_hash() {
  (
    cd "$1"
    find . -printf '%p %y %m %l\n' | LC_ALL=C sort
    find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
  ) | sha256sum | cut -c1-64
}

# A fresh build context. Files go in as hard links (no copy; the cache and the repository share a file system), so
# nothing in a context may ever be written to: that would write to the original.
new_context() {
  rm -rf "${contexts_dir:?}/$1" && mkdir -p "$contexts_dir/$1"
  printf '%s' "$contexts_dir/$1"
}
add_to_context() { # CONTEXT SOURCE [PATH-IN-CONTEXT]
  local dest="$1/${3:-$(basename "$2")}"
  [ -e "$2" ] || die "$2 is missing for the build context $1"
  mkdir -p "$(dirname "$dest")"
  cp -al "$2" "$dest" 2>/dev/null || { rm -rf "$dest" && cp -a "$2" "$dest"; } ||
    die "could not put $2 into the build context $1"
}

image_id() { podman image inspect --format '{{.Id}}' "$1" 2>/dev/null; }
image_mb() { echo $(($(podman image inspect --format '{{.Size}}' "$1") / 1000000)); }

built=()
# build_image NAME REF DOCKERFILE CONTEXT BASE [buildah build options...]; BASE "" for a Dockerfile FROM scratch.
build_image() {
  local name="$1" ref="$2" dockerfile="$3" context="$4" base="$5" base_id="" fingerprint
  shift 5
  local options=(--layers --pull=never --network=host -f "$dockerfile" -t "$ref" "$@")
  if [ -n "$base" ]; then
    base_id="$(image_id "$base")" || die "the base image $base of $ref is missing (its step should have built it)"
    options+=(--build-arg "BASE=$base")
  fi
  fingerprint="$(
    {
      cat "$dockerfile"
      printf '%s\n' "${options[@]}" "$base_id"
      tree_hash "$context"
    } | sha256sum | cut -c1-64
  )"
  if stamp_matches "images-$name" "$fingerprint" && podman image exists "$ref"; then
    log "$ref up to date"
    return
  fi
  log "building $ref (${dockerfile#"$REPO_ROOT"/}, log: $logs_dir/$name.log)"
  local started=$SECONDS
  buildah build "${options[@]}" "$context" >"$logs_dir/$name.log" 2>&1 ||
    die "building $ref failed; the end of $logs_dir/$name.log:
$(tail -n 25 "$logs_dir/$name.log")"
  # The stamp is written only once the image has passed its smoke check (smoke_<name>, where there is one).
  local check="smoke_${name//-/_}"
  if declare -F "$check" >/dev/null; then "$check" "$ref"; fi
  write_stamp "images-$name" "$fingerprint"
  built+=("$ref")
  log "built $ref in $((SECONDS - started))s, $(image_mb "$ref") MB"
}

# A freshly built image must start, as the user it declares, on the host network.
smoke() { # REF PODMAN-RUN-ARGUMENTS...
  local ref="$1" out
  shift
  out="$(podman run --rm --network=host "$@" 2>&1)" || die "$ref does not run (podman run $*): $out"
  # The first line that is not a warning (OpenSearch and Ollama start with some), else the last one.
  log "$ref runs: $(grep -v -i -m 1 '^warning' <<<"$out" || tail -n 1 <<<"$out")"
}
# Importing modules loads their dependency trees: proof that npm ci installed what they need.
check_js='for (const m of process.argv.slice(1)) await import(m); console.log("loaded " + process.argv.slice(1).join(" ") + " on node " + process.version + " as uid " + process.getuid())'
smoke_node() { smoke "$1" --user 1000:1000 "$1" node -e 'console.log(`node ${process.version}, npm ${require("child_process").execSync("npm --version").toString().trim()}, uid ${process.getuid()}, HOME ${process.env.HOME}`)'; }
smoke_jre() { smoke "$1" --user 1000:1000 "$1" java -version; }
smoke_busybox() { smoke "$1" "$1" sh -c 'echo "busybox sh, $(ls /bin | wc -l) applets"'; }
smoke_operator() {
  smoke "$1" --entrypoint node "$1" --input-type=module -e "$check_js" \
    /app/operator/dist/operator.js /app/operator/dist/runtime/informer.js /app/operator/dist/config.js \
    /app/operator/dist/cortex/client.js
}
# The in-process embedding model runs in the image: ONNX Runtime's binary for this platform, the model and tokenizer.
embed_js="const { loadOnnxEmbedder } = await import('/app/cortex/dist/store/onnx-embedder.js');
const embedder = await loadOnnxEmbedder({ dir: '/opt/remram/embedding', model: '$EMBED_ONNX_NAME', dimensions: 384,
  batchSize: 8, threads: 1, queryTimeoutMs: 10000 });
const vector = await embedder.embedQuery('the spare key is under the mat');
console.log('embedded in process with $EMBED_ONNX_NAME: ' + vector.length + ' dimensions');"
smoke_cortex() {
  smoke "$1" --entrypoint node "$1" --input-type=module -e "$check_js" /app/cortex/dist/index.js
  smoke "$1" --entrypoint node "$1" --input-type=module -e "$embed_js"
}
# The whole server but its start (main.js listens), and the pages it serves.
smoke_app() {
  smoke "$1" --entrypoint node "$1" --input-type=module -e "$check_js" /app/app/dist/app.js
  smoke "$1" --entrypoint sh "$1" -c 'test -s /app/app/dist/web/index.html && echo "pages present, uid $(id -u)"'
}
smoke_hooks() { smoke "$1" "$1" sh -c 'test -s /plugin/dist/index.js && echo "plugin present, uid $(id -u)"'; }
smoke_openclaw_gateway() {
  smoke "$1" "$1" --version && smoke "$1" --entrypoint sh "$1" -c \
    'grep -rqs "@openclaw/discord" /opt/openclaw-npm-cache/_cacache/index-v5 && echo "Discord plugin in the npm cache"'
}
smoke_opensearch() { smoke "$1" --entrypoint /usr/share/opensearch/bin/opensearch "$1" --version; }
# The pod's repair step needs the image's shell and find.
smoke_ollama() { smoke "$1" "$1" --version && smoke "$1" --entrypoint sh "$1" -c 'command -v find >/dev/null && echo "sh and find present"'; }

# The machine's own apt sources (deb822 .sources and one-line .list files), as mmdebstrap takes them.
apt_sources() {
  local file
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -s "$file" ] && printf '%s\n' "$file"
  done
  return 0
}

# debian_base NAME REF MMDEBSTRAP-OPTIONS... -- PODMAN-IMPORT-CHANGES...
debian_base() {
  local name="$1" ref="$2" fingerprint sources=() options=() changes=() started=$SECONDS
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do options+=("$1") && shift; done
  shift
  changes=("$@")
  mapfile -t sources < <(apt_sources)
  [ ${#sources[@]} -gt 0 ] || die "no apt sources in /etc/apt/sources.list{,.d}: mmdebstrap needs the machine's mirror"
  fingerprint="$(
    {
      mmdebstrap --version
      printf '%s\n' "${options[@]}" "${changes[@]}"
      cat "${sources[@]}"
    } | sha256sum | cut -c1-64
  )"
  if stamp_matches "images-$name" "$fingerprint" && podman image exists "$ref"; then
    log "$ref up to date"
    return
  fi
  log "making $ref with mmdebstrap (${options[*]}; log: $logs_dir/$name.log)"
  local rootfs="$TMPDIR/$name.tar"
  rm -f "$rootfs"
  nice -n 10 mmdebstrap --quiet "${options[@]}" bookworm "$rootfs" "${sources[@]}" >"$logs_dir/$name.log" 2>&1 ||
    die "mmdebstrap for $ref failed; the end of $logs_dir/$name.log:
$(tail -n 25 "$logs_dir/$name.log")"
  local change_args=() change
  for change in "${changes[@]}"; do change_args+=(--change "$change"); done
  podman import "${change_args[@]}" "$rootfs" "$ref" >>"$logs_dir/$name.log" 2>&1 ||
    die "podman import of $ref failed; the end of $logs_dir/$name.log:
$(tail -n 25 "$logs_dir/$name.log")"
  rm -f "$rootfs"
  write_stamp "images-$name" "$fingerprint"
  built+=("$ref")
  log "made $ref in $((SECONDS - started))s, $(image_mb "$ref") MB"
}

# ---- Inputs that other installers make.
node_bin="$REMRAM_CACHE/node/bin/node"
npm_dir="$REMRAM_CACHE/node/lib/node_modules/npm"
opensearch_home="$REMRAM_CACHE/opensearch-$OPENSEARCH_VERSION"
ollama_bin="$REMRAM_BIN/ollama"
{ [ -x "$node_bin" ] && [ -f "$npm_dir/bin/npm-cli.js" ]; } || die "the cache's Node or npm is missing: run 'make setup' (hack/install-node.sh)"
[ -x "$opensearch_home/bin/opensearch" ] ||
  die "$opensearch_home is missing: run 'make setup' (hack/install-opensearch.sh assembles it)"
[ -x "$ollama_bin" ] || die "$ollama_bin is missing: run 'make setup' (hack/install-ollama.sh builds it)"
[ -d "$REPO_ROOT/node_modules/typescript" ] || die "the npm workspaces are not installed: run 'make deps'"
busybox_bin="$(dpkg -L busybox-static | grep -m1 '/bin/busybox$')" || die "busybox-static ships no bin/busybox"
busybox_version="$(dpkg-query -W -f='${Version}' busybox-static)"
busybox_version="${busybox_version#*:}" && busybox_version="${busybox_version%%-*}"
package_version() { node -p "require('$REPO_ROOT/$1/package.json').version"; }

# The Dockerfiles copy the compiled output; tsc -b and the bundler are incremental, so this is quick when nothing changed.
# The contract first: cortex and operator import its dist/ (their tsc -b would build it too, through their references).
# The app's server imports the contract's and the operator's; its pages are bundled into app/dist/web.
log "compiling the contract, cortex, operator, hooks and app (npm run build, build:web -w app)"
(cd "$REPO_ROOT" && npm run --silent build -w contract -w cortex -w operator -w hooks -w app >"$logs_dir/npm-build.log" 2>&1 &&
  npm run --silent build:web -w app >>"$logs_dir/npm-build.log" 2>&1) ||
  die "npm run build failed; the end of $logs_dir/npm-build.log:
$(tail -n 25 "$logs_dir/npm-build.log")"

started=$SECONDS
# buildah's and mmdebstrap's scratch space (a root file system at a time): in the cache, not in /tmp or /var/tmp.
export TMPDIR="$containers_dir/tmp"
# ---- Bases.
base=localhost/remram-base:bookworm
debian_base base "$base" --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr -- \
  'CMD ["/bin/bash"]' "ENV PATH=$system_path" 'LABEL org.opencontainers.image.description="Debian bookworm minbase (mmdebstrap), the test bed base"'
jre=localhost/remram-jre:17
build_image jre "$jre" "$HACK_DIR/images/jre/Dockerfile" "$(new_context jre)" "$base"

node_base="localhost/remram-node:$NODE_VERSION"
context="$(new_context node)"
add_to_context "$context" "$(readlink -f "$node_bin")" node
add_to_context "$context" "$npm_dir" npm
build_image node "$node_base" "$HACK_DIR/images/node/Dockerfile" "$context" "$base" --build-arg "NODE_VERSION=$NODE_VERSION"

busybox="localhost/remram-busybox:$busybox_version"
context="$(new_context busybox)"
add_to_context "$context" "$busybox_bin" busybox
build_image busybox "$busybox" "$HACK_DIR/images/busybox/Dockerfile" "$context" ""

# ---- The appliance's images.
# npm ci inside a build reaches the npm registry over HTTPS; the host's CA bundle carries the proxy's CA, if any.
ca_options=()
[ -f "$host_ca" ] && ca_options=(--volume "$host_ca:/run/host-ca.crt:ro" --build-arg NODE_EXTRA_CA_CERTS=/run/host-ca.crt)
# NAME [CONTEXT-NAME [ROOT]]: the root manifest, the lock, every workspace's package.json, NAME's and the contract's
# dist/, from ROOT (the repository by default; the previous release's tree for its images).
workspace_context() {
  local name="$1" context_name="${2:-$1}" root="${3:-$REPO_ROOT}" context ws
  context="$(new_context "$context_name")"
  add_to_context "$context" "$root/package.json"
  add_to_context "$context" "$root/package-lock.json"
  for ws in contract cortex operator hooks test/harness; do add_to_context "$context" "$root/$ws/package.json" "$ws/package.json"; done
  add_to_context "$context" "$root/contract/dist" "contract/dist"
  add_to_context "$context" "$root/$name/dist" "$name/dist"
  printf '%s' "$context"
}
refs=()

operator="localhost/remram/operator:$(package_version operator)"
context="$(workspace_context operator)"
add_to_context "$context" "$REPO_ROOT/hardware-profiles"
build_image operator "$operator" "$REPO_ROOT/operator/Dockerfile" "$context" "$node_base" \
  --build-arg "VERSION=$(package_version operator)" "${ca_options[@]}"
refs+=("operator=$operator")

cortex="localhost/remram/cortex:$(package_version cortex)"
context="$(workspace_context cortex)"
# The in-process embedding model (make setup's embedding-onnx step, before this one).
embedding_model="$REMRAM_CACHE/embedding-onnx/$EMBED_ONNX_NAME"
[ -f "$embedding_model/model.onnx" ] || die "$embedding_model has no model.onnx: run hack/install-embedding-onnx.sh first"
add_to_context "$context" "$embedding_model" cortex/embedding-model
build_image cortex "$cortex" "$REPO_ROOT/cortex/Dockerfile" "$context" "$node_base" \
  --build-arg "VERSION=$(package_version cortex)" "${ca_options[@]}"
refs+=("cortex=$cortex")

# remram-app: its server and pages, the contract, and the two operator modules it imports (kube-client, approval).
app="localhost/remram/app:$(package_version app)"
context="$(workspace_context app)"
add_to_context "$context" "$REPO_ROOT/app/package.json" app/package.json
for file in runtime/kube-client.js api/approval.js; do add_to_context "$context" "$REPO_ROOT/operator/dist/$file" "operator/dist/$file"; done
[ -s "$context/app/dist/web/index.html" ] || die "app/dist/web has no index.html: npm run build:web -w app did not build the pages"
build_image app "$app" "$REPO_ROOT/app/Dockerfile" "$context" "$node_base" \
  --build-arg "VERSION=$(package_version app)" "${ca_options[@]}"
refs+=("app=$app")

hooks="localhost/remram/hooks:$(package_version hooks)"
context="$(new_context hooks)"
for file in openclaw.plugin.json package.json dist/index.js; do add_to_context "$context" "$REPO_ROOT/hooks/$file" "hooks/$file"; done
build_image hooks "$hooks" "$REPO_ROOT/hooks/Dockerfile" "$context" "$busybox" --build-arg "VERSION=$(package_version hooks)"
refs+=("hooks=$hooks")

gateway="localhost/remram/openclaw-gateway:$OPENCLAW_VERSION"
build_image openclaw-gateway "$gateway" "$HACK_DIR/gateway/Dockerfile" "$(new_context openclaw-gateway)" "$node_base" \
  --build-arg "OPENCLAW_VERSION=$OPENCLAW_VERSION" "${ca_options[@]}"
refs+=("openclaw-gateway=$gateway")

opensearch="localhost/remram/opensearch:$OPENSEARCH_VERSION"
context="$(new_context opensearch)"
add_to_context "$context" "$(readlink -f "$opensearch_home")" opensearch
# remram.env names this host's JDK and user, and logs/ holds whatever ran from the installation: neither belongs in it.
rm -f "$context/opensearch/remram.env"
[ ! -d "$context/opensearch/logs" ] || find "$context/opensearch/logs" -mindepth 1 -delete
add_to_context "$context" "$HACK_DIR/images/opensearch/opensearch.yml"
add_to_context "$context" "$HACK_DIR/images/opensearch/docker-entrypoint.sh"
build_image opensearch "$opensearch" "$HACK_DIR/opensearch/Dockerfile" "$context" "$jre" \
  --build-arg "VERSION=$OPENSEARCH_VERSION" --build-arg "KNN_VERSION=$OPENSEARCH_KNN_VERSION"
refs+=("opensearch=$opensearch")

ollama="localhost/remram/ollama:$OLLAMA_VERSION"
context="$(new_context ollama)"
add_to_context "$context" "$ollama_bin"
mkdir -p "$context/home"
build_image ollama "$ollama" "$HACK_DIR/ollama/Dockerfile" "$context" "$base" --build-arg "VERSION=$OLLAMA_VERSION"
refs+=("ollama=$ollama")

# ---- The previous release's own images (operator, Cortex, hooks) and chart, which the real-node suite installs and
# then upgrades to this tree's. Built from its commit (UPGRADE_FROM_COMMIT) with its own lock and Dockerfiles; the
# third-party images (gateway, OpenSearch, Ollama) are this tree's pins, so a differing pin there is logged.
previous_commit="$(git -C "$REPO_ROOT" rev-parse --verify --quiet "$UPGRADE_FROM_COMMIT^{commit}")" ||
  die "the previous release's commit $UPGRADE_FROM_COMMIT (UPGRADE_FROM_COMMIT in hack/versions.env) is not in this clone: fetch the full history (git fetch --unshallow)"
previous_dir="$REMRAM_CACHE/previous/$previous_commit"
previous_tag="previous-${previous_commit:0:12}"
# Its tree, installed and compiled once per commit; node_modules goes afterwards (the images install their own).
previous_source() {
  if stamp_matches previous-source "$previous_commit" && [ -d "$previous_dir/operator/dist" ]; then return; fi
  log "compiling the previous release ${previous_commit:0:12} (log: $logs_dir/previous-build.log)"
  rm -rf "$REMRAM_CACHE/previous" && mkdir -p "$previous_dir"
  git -C "$REPO_ROOT" archive "$previous_commit" | tar -x -C "$previous_dir"
  (
    cd "$previous_dir"
    # The same lock as this tree's (the usual case): its node_modules as hard links (one file system), no install.
    # The workspaces' links in it are relative, so they resolve to the previous tree's packages.
    if ! { cmp -s package-lock.json "$REPO_ROOT/package-lock.json" && cp -al "$REPO_ROOT/node_modules" node_modules; }; then
      rm -rf node_modules
      npm ci --no-audit --no-fund --prefer-offline --loglevel=error
    fi
    rm -rf node_modules/.cache
    npm run --silent build -w contract -w cortex -w operator -w hooks
    rm -rf node_modules ./*/node_modules test/harness/node_modules
  ) >"$logs_dir/previous-build.log" 2>&1 || die "compiling the previous release failed; the end of $logs_dir/previous-build.log:
$(tail -n 25 "$logs_dir/previous-build.log")"
  write_stamp previous-source "$previous_commit"
}
previous_source
for pin in OPENCLAW_VERSION OPENSEARCH_VERSION OLLAMA_VERSION; do
  previous_pin="$(sed -n "s/^$pin=//p" "$previous_dir/hack/versions.env")"
  [ "$previous_pin" = "${!pin}" ] ||
    log "the previous release pins $pin=$previous_pin, this tree ${!pin}: its upgrade test runs this tree's image of it"
done
previous_operator="localhost/remram/operator:$previous_tag"
context="$(workspace_context operator previous-operator "$previous_dir")"
add_to_context "$context" "$previous_dir/hardware-profiles"
build_image previous-operator "$previous_operator" "$previous_dir/operator/Dockerfile" "$context" "$node_base" \
  --build-arg "VERSION=$previous_tag" "${ca_options[@]}"
refs+=("previous-operator=$previous_operator")
previous_cortex="localhost/remram/cortex:$previous_tag"
build_image previous-cortex "$previous_cortex" "$previous_dir/cortex/Dockerfile" \
  "$(workspace_context cortex previous-cortex "$previous_dir")" "$node_base" --build-arg "VERSION=$previous_tag" "${ca_options[@]}"
refs+=("previous-cortex=$previous_cortex")
previous_hooks="localhost/remram/hooks:$previous_tag"
context="$(new_context previous-hooks)"
for file in openclaw.plugin.json package.json dist/index.js; do add_to_context "$context" "$previous_dir/hooks/$file" "hooks/$file"; done
build_image previous-hooks "$previous_hooks" "$previous_dir/hooks/Dockerfile" "$context" "$busybox" --build-arg "VERSION=$previous_tag"
refs+=("previous-hooks=$previous_hooks")

# ---- Archives for the real node (`ctr images import`), only for images whose ID changed.
env_file="REMRAM_IMAGE_OPERATOR=$operator
REMRAM_IMAGE_CORTEX=$cortex
REMRAM_IMAGE_APP=$app
REMRAM_IMAGE_HOOKS=$hooks
REMRAM_IMAGE_GATEWAY=$gateway
REMRAM_IMAGE_OPENSEARCH=$opensearch
REMRAM_IMAGE_OLLAMA=$ollama
REMRAM_PREVIOUS_COMMIT=$previous_commit
REMRAM_PREVIOUS_CHART=$previous_dir/charts/remram-operator
REMRAM_PREVIOUS_IMAGE_OPERATOR=$previous_operator
REMRAM_PREVIOUS_IMAGE_CORTEX=$previous_cortex
REMRAM_PREVIOUS_IMAGE_HOOKS=$previous_hooks"
for entry in "${refs[@]}"; do
  name="${entry%%=*}" ref="${entry#*=}" archive="$app_dir/${entry%%=*}.tar"
  id="$(image_id "$ref")"
  if stamp_matches "images-$name-archive" "$id" && [ -f "$archive" ]; then continue; fi
  rm -f "$archive.partial"
  podman save --quiet --format docker-archive -o "$archive.partial" "$ref" ||
    die "podman save $ref failed: is $app_dir writable and is there space?"
  mv -f "$archive.partial" "$archive"
  write_stamp "images-$name-archive" "$id"
  log "saved $ref to $archive ($(($(stat -c %s "$archive") / 1000000)) MB)"
done
write_if_changed "$app_dir/images.env" "# Written by hack/install-images.sh: the test bed's images, under the names of the operator's settings
# (REMRAM_IMAGE_OPERATOR: the operator's own image, for the chart's image.repository/tag).
$env_file"

# The contexts are hard links: gone, they pin no replaced file's old content on disk.
rm -rf "$contexts_dir"
# A rebuilt image leaves its predecessor untagged: drop those (layers still used by current images stay).
# Tidying only: a container someone left behind (a killed test run's) may still use an old image, and
# podman then refuses the whole prune; the images are ready either way, so say so and go on.
if [ ${#built[@]} -gt 0 ] && ! prune_out="$(podman image prune -f 2>&1)"; then
  log "left old images in place (${prune_out##*Error: }); podman ps -a shows the containers using them"
fi
log "images ready in $((SECONDS - started))s (built now: ${#built[@]}); archives in $app_dir:"
podman images --format '  {{.Repository}}:{{.Tag}}  {{.Size}}' | grep -F localhost/remram >&2
