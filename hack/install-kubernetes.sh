#!/usr/bin/env bash
# The Kubernetes part of the test bed, built from Go modules into $REMRAM_CACHE/bin (no release downloads):
#
#   kube-apiserver, kube-controller-manager, kube-scheduler, kubectl   wrapper module hack/go/kubernetes
#   etcd                                                               wrapper module hack/go/etcd
#   kwok (+ $REMRAM_CACHE/share/kwok-stages.yaml)                      go install sigs.k8s.io/kwok/cmd/kwok
#   helm                                                               go install helm.sh/helm/v3/cmd/helm
#
# Each part has its own stamp (version + digest of its go.mod/go.sum), so a re-run with nothing changed only checks
# stamps, and changing one pin in versions.env or one wrapper module rebuilds only that part.
COMPONENT=kubernetes
source "$(dirname "$0")/lib.sh"
# kube_module, module_digest, check_kube_wrapper, kube_ldflags, kube_fingerprint: shared with install-node-parts.sh.
source "$HACK_DIR/kube-build.sh"

etcd_module="$HACK_DIR/go/etcd"
stages_file="$REMRAM_CACHE/share/kwok-stages.yaml"
kube_binaries=(kube-apiserver kube-controller-manager kube-scheduler kubectl)

kube_binaries_present() {
  local name
  for name in "${kube_binaries[@]}"; do [ -x "$REMRAM_BIN/$name" ] || return 1; done
}

build_kube() {
  check_kube_wrapper
  log "building ${kube_binaries[*]} v$KUBERNETES_VERSION from $kube_module (one go build: about 5 min cold on 2 idle cores, 30 on a busy machine)"
  local out ldflags
  ldflags="$(kube_ldflags)"
  out="$(mktemp -d)"
  # One invocation for all four so the shared packages (apiserver, client-go, ...) compile once.
  (
    cd "$kube_module"
    CGO_ENABLED=0 nice -n 10 go build -ldflags "$ldflags" -o "$out/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
  ) || die "go build of the Kubernetes binaries failed"
  local reported
  reported="$("$out/kube-apiserver" --version)"
  [ "$reported" = "Kubernetes v$KUBERNETES_VERSION" ] || die "kube-apiserver reports '$reported', expected v$KUBERNETES_VERSION"
  local name
  for name in "${kube_binaries[@]}"; do mv -f "$out/$name" "$REMRAM_BIN/$name"; done
  rmdir "$out"
  write_stamp kubernetes "$(kube_fingerprint)"
}

build_etcd() {
  grep -qF "go.etcd.io/etcd/server/v3 v$ETCD_VERSION" "$etcd_module/go.mod" \
    || die "$etcd_module/go.mod does not require go.etcd.io/etcd/server/v3 v$ETCD_VERSION"
  log "building etcd v$ETCD_VERSION from $etcd_module (about 30 s cold)"
  local out
  out="$(mktemp -d)"
  ( cd "$etcd_module" && CGO_ENABLED=0 nice -n 10 go build -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3 ) \
    || die "go build of etcd failed"
  # Capture first: `grep -q` closing the pipe early would fail the pipeline under pipefail.
  local reported
  reported="$("$out/etcd" --version)"
  grep -qF "etcd Version: $ETCD_VERSION" <<<"$reported" || die "the built etcd reports '$reported', expected $ETCD_VERSION"
  mv -f "$out/etcd" "$REMRAM_BIN/etcd"
  rmdir "$out"
  write_stamp etcd "$ETCD_VERSION $(module_digest "$etcd_module")"
}

# kwok and helm carry no replace directives, so `go install pkg@version` builds them against their own go.sum.
go_install() {
  local package="$1" ldflags="$2" name="${1##*/}" out
  out="$(mktemp -d)"
  CGO_ENABLED=0 GOBIN="$out" nice -n 10 go install -ldflags "$ldflags" "$package" || die "go install $package failed"
  mv -f "$out/${name%@*}" "$REMRAM_BIN/${name%@*}"
  rmdir "$out"
}

# kwok refuses to start without Stage objects; these are the ones kwokctl uses: nodes become Ready at once and keep a
# Lease, pods on kwok nodes become Running and Ready, deleted pods go away.
write_kwok_stages() {
  local source_dir
  source_dir="$(go mod download -json "sigs.k8s.io/kwok@v$KWOK_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')"
  mkdir -p "$(dirname "$stages_file")"
  local stage first=1
  : >"$stages_file.tmp"
  for stage in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
    pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
    [ -f "$source_dir/kustomize/stage/$stage.yaml" ] || die "kwok v$KWOK_VERSION has no stage $stage"
    [ "$first" = 1 ] || printf -- '---\n' >>"$stages_file.tmp"
    first=0
    cat "$source_dir/kustomize/stage/$stage.yaml" >>"$stages_file.tmp"
  done
  mv -f "$stages_file.tmp" "$stages_file"
}

build_kwok() {
  log "building kwok v$KWOK_VERSION (go install, 1-2 min cold)"
  go_install "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION" "-s -w"
  write_kwok_stages
  local reported
  reported="$("$REMRAM_BIN/kwok" --version 2>&1)"
  grep -qF "$KWOK_VERSION" <<<"$reported" || die "the built kwok reports '$reported', expected $KWOK_VERSION"
  write_stamp kwok "$KWOK_VERSION"
}

build_helm() {
  log "building helm v$HELM_VERSION (go install, about 1 min cold)"
  # Helm's Makefile derives its default Kubernetes version (used by `helm template` and lint) from its client-go.
  local client_go major minor
  client_go="$(go mod download -json "helm.sh/helm/v3@v$HELM_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])' \
    | xargs grep -E '^\s+k8s\.io/client-go v' | awk '{print $2}')"
  [ -n "$client_go" ] || die "could not read helm's k8s.io/client-go version"
  major=$(( $(printf '%s' "${client_go#v}" | cut -d. -f1) + 1 ))
  minor="$(printf '%s' "$client_go" | cut -d. -f2)"
  local flags="-s -w -X helm.sh/helm/v3/internal/version.version=v$HELM_VERSION"
  flags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  local pkg
  for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    flags+=" -X $pkg.k8sVersionMajor=$major -X $pkg.k8sVersionMinor=$minor"
  done
  go_install "helm.sh/helm/v3/cmd/helm@v$HELM_VERSION" "$flags"
  local reported
  reported="$("$REMRAM_BIN/helm" version --short)"
  grep -qF "v$HELM_VERSION" <<<"$reported" || die "the built helm reports '$reported', expected v$HELM_VERSION"
  write_stamp helm "$HELM_VERSION"
}

require_cmd go "the Kubernetes test bed is built from Go modules (go >= 1.26)"
require_cmd python3 "reads 'go mod download -json' output"
started=$SECONDS

if stamp_matches kubernetes "$(kube_fingerprint)" && kube_binaries_present; then
  log "kube-apiserver, kube-controller-manager, kube-scheduler, kubectl v$KUBERNETES_VERSION already built"
else
  timed build_kube
fi

if stamp_matches etcd "$ETCD_VERSION $(module_digest "$etcd_module")" && [ -x "$REMRAM_BIN/etcd" ]; then
  log "etcd v$ETCD_VERSION already built"
else
  timed build_etcd
fi

if stamp_matches kwok "$KWOK_VERSION" && [ -x "$REMRAM_BIN/kwok" ] && [ -f "$stages_file" ]; then
  log "kwok v$KWOK_VERSION already built"
else
  timed build_kwok
fi

if stamp_matches helm "$HELM_VERSION" && [ -x "$REMRAM_BIN/helm" ]; then
  log "helm v$HELM_VERSION already built"
else
  timed build_helm
fi

log "kubernetes test bed ready in $((SECONDS - started))s: ${kube_binaries[*]} etcd kwok helm in $REMRAM_BIN"
