#!/usr/bin/env bash
# The parts of a real single-node Kubernetes node: the ones k3s embeds in its one binary (k3s itself cannot be had
# here: the Go module proxy refuses github.com/k3s-io/k3s). No release download, image registry or Docker engine:
#
#   containerd runc containernetworking-plugins iptables ipset   Debian packages (apt-get, only what is missing)
#   conntrack socat busybox-static gcc libc6-dev patch
#   kubelet, kube-proxy            $REMRAM_BIN   wrapper module hack/go/kubernetes, like the control plane
#   coredns                        $REMRAM_BIN   go install github.com/coredns/coredns@v$COREDNS_VERSION
#   local-path-provisioner         $REMRAM_BIN   go install github.com/rancher/local-path-provisioner@v...
#   kube-router                    $REMRAM_BIN   go build inside a copy of its module (go install is refused)
#   traefik                        $REMRAM_BIN   go build inside a patched copy of its module (hack/node/traefik)
#   pause                          $REMRAM_BIN   gcc, from build/pause/linux/pause.c of the k8s.io/kubernetes module
#   {pause,busybox,coredns,local-path-provisioner,traefik}.tar   $REMRAM_CACHE/images, single-layer docker-archive images
#                                  packed by hack/node/mkimage.py; load with `ctr -n k8s.io images import`
#
# Each part has its own stamp (node-*), so a re-run with nothing changed only checks stamps. The Go binaries are
# static (CGO_ENABLED=0) because the images have no libc.
COMPONENT=node-parts
source "$(dirname "$0")/lib.sh"
source "$HACK_DIR/kube-build.sh"

images_dir="$REMRAM_CACHE/images"
mkimage="$HACK_DIR/node/mkimage.py"
# gcc and libc6-dev build the static pause binary; conntrack lets kube-proxy clear stale UDP entries; socat relays
# TCP into the node's network namespace; busybox-static is the test and helper image; patch applies Traefik's patches.
debian_packages=(containerd runc containernetworking-plugins iptables ipset conntrack socat busybox-static
  gcc libc6-dev patch)
# The checksum database has no entry for kube-router/v2 (its lookup answers 404), so the download needs GONOSUMDB and
# nothing verifies the zip: pin its hash here (`go mod download -json` prints it as "Sum").
declare -A kube_router_sums=([2.1.0]="h1:xWsptKtmZ44L+NjwFKoFAFlVdxCz8fka9A/eYJe95Ok=")

install_debian_packages() {
  local missing=() package
  for package in "${debian_packages[@]}"; do
    [ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" = "install ok installed" ] || missing+=("$package")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "Debian packages present: ${debian_packages[*]}"
    return
  fi
  [ "$(id -u)" = 0 ] || die "Debian packages missing: ${missing[*]}; run as root, or first:"$'\n'"  sudo apt-get install -y --no-install-recommends ${missing[*]}"
  log "installing ${missing[*]} (apt-get)"
  # No service is started on purpose: the harness runs containerd with a private config and socket.
  DEBIAN_FRONTEND=noninteractive apt-get update -qq || die "apt-get update failed: check the apt sources and the network"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    || die "apt-get install ${missing[*]} failed (see above)"
}

# An image layer has no libc, so a dynamically linked binary would fail to start with a bare "no such file".
require_static() {
  local headers
  headers="$(LC_ALL=C readelf -lW "$1")" || die "readelf cannot read $1"
  if grep -qF 'program interpreter' <<<"$headers"; then die "$1 is dynamically linked: build it with CGO_ENABLED=0"; fi
}

# `go install pkg@version` into a temp dir, checked for static linking, then moved into $REMRAM_BIN.
node_go_install() {
  local package="$1" ldflags="$2" name="${1##*/}" out
  name="${name%@*}"
  out="$(mktemp -d)"
  CGO_ENABLED=0 GOBIN="$out" nice -n 10 go install -ldflags "$ldflags" "$package" \
    || die "go install $package failed: is the Go module proxy reachable?"
  require_static "$out/$name"
  mv -f "$out/$name" "$REMRAM_BIN/$name"
  rmdir "$out"
}

# Same module, go.sum and link flags as the control plane, and CGO_ENABLED=0 like it (upstream links the kubelet with
# cgo, but nothing it needs on Linux requires it): the shared packages then come from the build cache, a relink.
build_kubelet() {
  check_kube_wrapper
  log "building kubelet and kube-proxy v$KUBERNETES_VERSION from $kube_module (about 1 min after the control plane)"
  local out ldflags name reported
  ldflags="$(kube_ldflags)"
  out="$(mktemp -d)"
  ( cd "$kube_module" && CGO_ENABLED=0 nice -n 10 go build -ldflags "$ldflags" -o "$out/" \
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy ) \
    || die "go build of kubelet and kube-proxy failed: run 'go mod tidy' in $kube_module if a module is missing"
  for name in kubelet kube-proxy; do
    require_static "$out/$name"
    reported="$("$out/$name" --version)"
    [ "$reported" = "Kubernetes v$KUBERNETES_VERSION" ] || die "$name reports '$reported', expected v$KUBERNETES_VERSION"
  done
  for name in kubelet kube-proxy; do mv -f "$out/$name" "$REMRAM_BIN/$name"; done
  rmdir "$out"
  write_stamp node-kubelet "$(kube_fingerprint)"
}

build_coredns() {
  log "building coredns v$COREDNS_VERSION (go install, about 3 min cold: it pulls the cloud SDKs of its plugins)"
  node_go_install "github.com/coredns/coredns@v$COREDNS_VERSION" "-s -w"
  local reported
  reported="$("$REMRAM_BIN/coredns" -version)"
  grep -qF "CoreDNS-$COREDNS_VERSION" <<<"$reported" || die "the built coredns reports '$reported', expected $COREDNS_VERSION"
  write_stamp node-coredns "$COREDNS_VERSION"
}

build_local_path_provisioner() {
  local version="v$LOCAL_PATH_PROVISIONER_VERSION" reported
  log "building local-path-provisioner $version (go install, about 2 min cold)"
  # main.VERSION is what its scripts/build sets; the default reads 0.0.1.
  node_go_install "github.com/rancher/local-path-provisioner@$version" "-s -w -X main.VERSION=$version"
  reported="$("$REMRAM_BIN/local-path-provisioner" --version)"
  grep -qF "$version" <<<"$reported" || die "the built local-path-provisioner reports '$reported', expected $version"
  write_stamp node-local-path-provisioner "$LOCAL_PATH_PROVISIONER_VERSION"
}

kube_router_fingerprint() { printf '%s %s' "$KUBE_ROUTER_VERSION" "${kube_router_sums[$KUBE_ROUTER_VERSION]:-unpinned}"; }

# `go install …/kube-router/v2/cmd/kube-router@v2.1.0` fails: the proxy answers 403 for the module's @v/list, which
# go install reads for deprecation notices. The zip itself is served, so build inside a writable copy of it, against
# its own go.sum.
build_kube_router() {
  local module="github.com/cloudnativelabs/kube-router/v2" want="${kube_router_sums[$KUBE_ROUTER_VERSION]:-}"
  [ -n "$want" ] || die "no pinned hash for kube-router v$KUBE_ROUTER_VERSION: add it to kube_router_sums in $0" \
    "(the Sum printed by 'GONOSUMDB=github.com/cloudnativelabs/kube-router go mod download -json" \
    "$module@v$KUBE_ROUTER_VERSION', checked against the upstream tag)"
  log "building kube-router v$KUBE_ROUTER_VERSION (go build in a copy of its module, about 2 min cold)"
  local fields dir sum info src reported
  fields="$(GONOSUMDB=github.com/cloudnativelabs/kube-router go mod download -json "$module@v$KUBE_ROUTER_VERSION" \
    | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("Dir",""), d.get("Sum",""), d.get("Info",""))')" \
    || die "could not download $module@v$KUBE_ROUTER_VERSION from the Go module proxy"
  read -r dir sum info <<<"$fields"
  [ "$sum" = "$want" ] || die "$module@v$KUBE_ROUTER_VERSION has hash '$sum', pinned $want: the download is not the reviewed one"
  local build_date
  build_date="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Time"])' "$info")"
  src="$(mktemp -d)"
  cp -R "$dir/." "$src/"
  chmod -R u+w "$src"
  # Version and BuildDate as its Makefile sets them (BuildDate: the tag's publication time, for identical rebuilds).
  ( cd "$src" && CGO_ENABLED=0 nice -n 10 go build \
    -ldflags "-s -w -X $module/pkg/version.Version=v$KUBE_ROUTER_VERSION -X $module/pkg/version.BuildDate=$build_date" \
    -o "$src/kube-router.bin" ./cmd/kube-router ) || die "go build of kube-router failed (source copy kept in $src)"
  require_static "$src/kube-router.bin"
  reported="$("$src/kube-router.bin" --version 2>&1)"
  grep -qF "version v$KUBE_ROUTER_VERSION," <<<"$reported" || die "the built kube-router reports '$reported', expected v$KUBE_ROUTER_VERSION"
  mv -f "$src/kube-router.bin" "$REMRAM_BIN/kube-router"
  rm -rf "$src"
  write_stamp node-kube-router "$(kube_router_fingerprint)"
}

# The ingress controller k3s ships. Its module does not build as published; each patch in hack/node/traefik says why
# it is needed. The checksum database verifies the download, so the patches always meet the same source.
traefik_patches=("$HACK_DIR"/node/traefik/*.patch)
traefik_fingerprint() { printf '%s %s' "$TRAEFIK_VERSION" "$(cat "${traefik_patches[@]}" | sha256sum | cut -c1-16)"; }

build_traefik() {
  local module="github.com/traefik/traefik/v3" fields dir info src patch build_date reported
  log "building traefik v$TRAEFIK_VERSION (go build in a patched copy of its module, about 4 min and 3 GB of memory cold)"
  fields="$(go mod download -json "$module@v$TRAEFIK_VERSION" \
    | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("Dir",""), d.get("Info",""))')" \
    || die "could not download $module@v$TRAEFIK_VERSION from the Go module proxy"
  read -r dir info <<<"$fields"
  src="$(mktemp -d)"
  cp -R "$dir/." "$src/"
  chmod -R u+w "$src"
  for patch in "${traefik_patches[@]}"; do
    patch --forward --batch --fuzz=0 --quiet -p1 -d "$src" <"$patch" \
      || die "$patch no longer applies to traefik v$TRAEFIK_VERSION (source copy kept in $src): rework it against" \
        "that version, or delete it if the module now builds without it"
  done
  build_date="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Time"])' "$info")"
  # Version and BuildDate as its Makefile sets them (BuildDate: the tag's publication time, for identical rebuilds).
  ( cd "$src" && CGO_ENABLED=0 nice -n 10 go build \
    -ldflags "-s -w -X $module/pkg/version.Version=v$TRAEFIK_VERSION -X $module/pkg/version.BuildDate=$build_date" \
    -o "$src/traefik.bin" ./cmd/traefik ) || die "go build of traefik failed (patched source copy kept in $src)"
  require_static "$src/traefik.bin"
  reported="$("$src/traefik.bin" version)"
  grep -qE "^Version: +v$TRAEFIK_VERSION$" <<<"$reported" || die "the built traefik reports '$reported', expected v$TRAEFIK_VERSION"
  mv -f "$src/traefik.bin" "$REMRAM_BIN/traefik"
  rm -rf "$src"
  write_stamp node-traefik "$(traefik_fingerprint)"
}

pause_source() {
  local dir
  dir="$(go mod download -json "k8s.io/kubernetes@v$KUBERNETES_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')"
  printf '%s/build/pause/linux/pause.c' "$dir"
}

# The sandbox ("infra") container of every pod. Upstream builds the same file the same way, in a container.
pause_fingerprint() { printf '%s %s' "$PAUSE_VERSION" "$(sha256sum <"$(pause_source)" | cut -c1-16)"; }

build_pause() {
  local source out reported
  log "building pause $PAUSE_VERSION (gcc, static, a few seconds)"
  source="$(pause_source)"
  [ -f "$source" ] || die "k8s.io/kubernetes@v$KUBERNETES_VERSION has no $source"
  out="$(mktemp -d)"
  gcc -Os -Wall -Werror -static -DVERSION="v$PAUSE_VERSION-remram" -o "$out/pause" "$source" \
    || die "gcc could not build pause: it needs gcc and libc6-dev (the static libc)"
  strip "$out/pause"
  reported="$("$out/pause" -v)"
  [ "$reported" = "pause.c v$PAUSE_VERSION-remram" ] || die "the built pause reports '$reported'"
  mv -f "$out/pause" "$REMRAM_BIN/pause"
  rmdir "$out"
  write_stamp node-pause "$(pause_fingerprint)"
}

# Rootfs recipes, one per image: each fills the folder given as $1 (umask 022, owner and times are reset by mkimage).
rootfs_pause() { install -m 0755 "$REMRAM_BIN/pause" "$1/pause"; }
rootfs_coredns() { install -m 0755 "$REMRAM_BIN/coredns" "$1/coredns"; }
# Traefik runs as 65532 (the user of k3s's Traefik chart), named in /etc/passwd for tools that look it up.
rootfs_traefik() {
  install -D -m 0755 "$REMRAM_BIN/traefik" "$1/usr/local/bin/traefik"
  mkdir -p "$1/etc" "$1/tmp"
  chmod 1777 "$1/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\ntraefik:x:65532:65532:traefik:/nonexistent:/sbin/nologin\n' >"$1/etc/passwd"
  printf 'root:x:0:\ntraefik:x:65532:\n' >"$1/etc/group"
}
rootfs_local_path_provisioner() { install -D -m 0755 "$REMRAM_BIN/local-path-provisioner" "$1/usr/bin/local-path-provisioner"; }
# What `busybox --install -s` does, without a chroot: one symlink per applet at its usual path. The users are the
# ones test pods and local-path-provisioner's helper pods run as.
rootfs_busybox() {
  local applet
  install -D -m 0755 /bin/busybox "$1/bin/busybox"
  for applet in $(/bin/busybox --list-full); do
    [ "$applet" != bin/busybox ] && [ "$applet" != linuxrc ] || continue
    mkdir -p "$1/$(dirname "$applet")"
    ln -s /bin/busybox "$1/$applet"
  done
  mkdir -p "$1/etc" "$1/root" "$1/tmp"
  chmod 0700 "$1/root"
  chmod 1777 "$1/tmp"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$1/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' >"$1/etc/group"
}

# build_image ARCHIVE NAME:TAG CONFIG_JSON RECIPE INPUT...: the stamp covers the reference, the config, the recipe's
# own text, mkimage.py and every input file, so a change to any of them repacks that image only.
build_image() {
  local name="$1" archive="$images_dir/$1.tar" ref="$2" config="$3" recipe="$4" fingerprint
  shift 4
  fingerprint="$ref $({ printf '%s\n' "$config"; declare -f "$recipe"; cat "$mkimage" "$@"; } | sha256sum | cut -c1-16)"
  if stamp_matches "node-image-$name" "$fingerprint" && [ -f "$archive" ]; then
    log "image $ref already packed ($archive)"
    return
  fi
  local started=$SECONDS rootfs
  rootfs="$(mktemp -d)"
  ( umask 022 && "$recipe" "$rootfs" ) || die "could not assemble the rootfs of $ref"
  mkdir -p "$images_dir"
  python3 "$mkimage" "$rootfs" "$ref" "$archive" "$config" || die "mkimage.py could not pack $ref"
  rm -rf "$rootfs"
  write_stamp "node-image-$name" "$fingerprint"
  log "packed $ref into $archive ($(du -h "$archive" | cut -f1)) in $((SECONDS - started))s"
}

require_cmd dpkg-query "the node's runtime parts are Debian packages (Debian or Ubuntu)"
require_cmd go "kubelet, kube-proxy, coredns, local-path-provisioner, kube-router and traefik are built from Go modules (go >= 1.26)"
require_cmd python3 "reads 'go mod download -json' output and packs the images"
started=$SECONDS

install_debian_packages
require_cmd readelf "checks that the image binaries are static (binutils, installed with gcc)"

if stamp_matches node-kubelet "$(kube_fingerprint)" && [ -x "$REMRAM_BIN/kubelet" ] && [ -x "$REMRAM_BIN/kube-proxy" ]; then
  log "kubelet, kube-proxy v$KUBERNETES_VERSION already built"
else
  timed build_kubelet
fi

if stamp_matches node-coredns "$COREDNS_VERSION" && [ -x "$REMRAM_BIN/coredns" ]; then
  log "coredns v$COREDNS_VERSION already built"
else
  timed build_coredns
fi

if stamp_matches node-local-path-provisioner "$LOCAL_PATH_PROVISIONER_VERSION" && [ -x "$REMRAM_BIN/local-path-provisioner" ]; then
  log "local-path-provisioner v$LOCAL_PATH_PROVISIONER_VERSION already built"
else
  timed build_local_path_provisioner
fi

if stamp_matches node-kube-router "$(kube_router_fingerprint)" && [ -x "$REMRAM_BIN/kube-router" ]; then
  log "kube-router v$KUBE_ROUTER_VERSION already built"
else
  timed build_kube_router
fi

if stamp_matches node-traefik "$(traefik_fingerprint)" && [ -x "$REMRAM_BIN/traefik" ]; then
  log "traefik v$TRAEFIK_VERSION already built"
else
  timed build_traefik
fi

if stamp_matches node-pause "$(pause_fingerprint)" && [ -x "$REMRAM_BIN/pause" ]; then
  log "pause $PAUSE_VERSION already built"
else
  timed build_pause
fi

# The Debian version without epoch and revision (1:1.35.0-4+deb12u1 → 1.35.0): a tag may not contain ':' or '+'.
busybox_version="$(dpkg-query -W -f='${Version}' busybox-static)"
busybox_version="${busybox_version#*:}"
busybox_version="${busybox_version%%-*}"
path_env='"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"'
build_image pause "localhost/pause:$PAUSE_VERSION" '{"Entrypoint":["/pause"],"User":"65535:65535"}' rootfs_pause \
  "$REMRAM_BIN/pause"
build_image busybox "localhost/busybox:$busybox_version" \
  '{"Cmd":["/bin/sh"],"Env":['"$path_env"']}' rootfs_busybox /bin/busybox
# No User: CoreDNS binds port 53 in the pod; the pod spec decides between root and NET_BIND_SERVICE.
build_image coredns "localhost/coredns:$COREDNS_VERSION" '{"Entrypoint":["/coredns"]}' rootfs_coredns "$REMRAM_BIN/coredns"
build_image local-path-provisioner "localhost/local-path-provisioner:v$LOCAL_PATH_PROVISIONER_VERSION" \
  '{"Entrypoint":["local-path-provisioner"],"Env":['"$path_env"']}' \
  rootfs_local_path_provisioner "$REMRAM_BIN/local-path-provisioner"
build_image traefik "localhost/traefik:v$TRAEFIK_VERSION" \
  '{"Entrypoint":["/usr/local/bin/traefik"],"User":"65532:65532","ExposedPorts":{"8000/tcp":{},"8443/tcp":{}}}' \
  rootfs_traefik "$REMRAM_BIN/traefik"

log "node parts ready in $((SECONDS - started))s: kubelet kube-proxy coredns local-path-provisioner kube-router traefik" \
  "pause in $REMRAM_BIN, images in $images_dir"
