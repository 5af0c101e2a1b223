# Helpers shared by the two installers that build from the wrapper module hack/go/kubernetes
# (install-kubernetes.sh: the control plane and kubectl; install-node-parts.sh: kubelet and kube-proxy), so both
# stamp their binaries the same way. Source it after lib.sh; do not run it.

kube_module="$HACK_DIR/go/kubernetes"

module_digest() { cat "$1/go.mod" "$1/go.sum" | sha256sum | cut -c1-16; }

# The wrapper pins each staging module by `replace`; a version bump in versions.env without regenerating the wrapper
# would build a mixed tree, so refuse it with the command that fixes it.
check_kube_wrapper() {
  local want="k8s.io/kubernetes v$KUBERNETES_VERSION" staging="v0.${KUBERNETES_VERSION#*.}" stale
  grep -qF "$want" "$kube_module/go.mod" || die "$kube_module/go.mod does not require $want: regenerate its require and replace lines"
  stale="$(grep -E '^\s+k8s\.io/[a-z-]+ => k8s\.io/[a-z-]+ v' "$kube_module/go.mod" | grep -vF " $staging" || true)"
  [ -z "$stale" ] || die "staging replaces in $kube_module/go.mod are not at $staging:"$'\n'"$stale"
}

# The version stamping of upstream's hack/lib/version.sh: without it every binary reports v0.0.0-master, which breaks
# kubeVersion constraints in Helm charts and any client that picks behaviour by server version.
kube_ldflags() {
  local minor="${KUBERNETES_VERSION#*.}"
  minor="${minor%%.*}"
  local build_date
  # The module's publication time, not the build time, so two builds of one version are identical.
  build_date="$(go mod download -json "k8s.io/kubernetes@v$KUBERNETES_VERSION" \
    | python3 -c 'import json,sys; print(json.load(open(json.load(sys.stdin)["Info"]))["Time"])')"
  [ -n "$build_date" ] || die "could not read the publication time of k8s.io/kubernetes@v$KUBERNETES_VERSION"
  local flags="-s -w" pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    # gitCommit is left empty: the module carries no commit hash, and the default is the literal "$Format:%H$".
    flags+=" -X $pkg.gitVersion=v$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitCommit="
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
  done
  printf '%s' "$flags"
}

# Version, wrapper module and link flags: a change to any of them rebuilds (relinks, with a warm cache).
kube_fingerprint() {
  printf '%s %s %s' "$KUBERNETES_VERSION" "$(module_digest "$kube_module")" "$(kube_ldflags | sha256sum | cut -c1-16)"
}
