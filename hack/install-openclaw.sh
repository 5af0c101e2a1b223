#!/usr/bin/env bash
# The OpenClaw gateway (pinned npm package, with its dependencies) in its own prefix, run by the cache's Node 24, and
# an npm cache holding OpenClaw's Discord channel plugin, seeded as the gateway image seeds its own
# (hack/gateway/Dockerfile), from which a gateway with the channel on installs the plugin offline.
#
#   package  $REMRAM_CACHE/openclaw-<version>/node_modules/openclaw   stamp "openclaw": OPENCLAW_VERSION + Node version
#   npm      $REMRAM_CACHE/openclaw-<version>/npm-cache               @openclaw/discord@<version> and its dependencies
#   command  $REMRAM_CACHE/bin/openclaw                               a wrapper that always uses the cache's Node
COMPONENT=openclaw
source "$(dirname "$0")/lib.sh"

node_dir="$REMRAM_CACHE/node"
target="$REMRAM_CACHE/openclaw-$OPENCLAW_VERSION"
wrapper="$REMRAM_BIN/openclaw"
[ -x "$node_dir/bin/node" ] || die "the cache's Node is missing: run hack/install-node.sh first"
# OpenClaw's preinstall rejects Node < 24.16, so npm and the lifecycle scripts must run on the cache's Node.
export PATH="$node_dir/bin:$PATH"
export npm_config_update_notifier=false
fingerprint="$OPENCLAW_VERSION $(node --version) discord-npm-cache"

write_wrapper() {
  # A wrapper rather than a symlink to the package's bin: the bin's `#!/usr/bin/env node` would pick up whatever
  # Node comes first on the caller's PATH, and the machine's own Node may be too old.
  cat >"$wrapper.tmp" <<EOF
#!/usr/bin/env bash
# Written by hack/install-openclaw.sh: OpenClaw $OPENCLAW_VERSION on the cache's Node.
export PATH="$node_dir/bin:\$PATH"
exec "$node_dir/bin/node" "$target/node_modules/openclaw/openclaw.mjs" "\$@"
EOF
  chmod +x "$wrapper.tmp"
  mv -f "$wrapper.tmp" "$wrapper"
}

seeded() { grep -rqs "@openclaw/discord" "$1/_cacache/index-v5"; }
if stamp_matches openclaw "$fingerprint" && [ -f "$target/node_modules/openclaw/openclaw.mjs" ] && seeded "$target/npm-cache"; then
  [ -x "$wrapper" ] || write_wrapper
  log "openclaw $OPENCLAW_VERSION already installed"; exit 0
fi

install_package() {
  log "installing openclaw@$OPENCLAW_VERSION with its dependencies into $target (about a minute cold)"
  # Install beside the target and swap it in, so an interrupted install never leaves a half-filled prefix behind.
  local staging="$target.partial"
  rm -rf "$staging" && mkdir -p "$staging"
  nice -n 10 npm install --prefix "$staging" --no-audit --no-fund --loglevel=error --omit=dev \
    "openclaw@$OPENCLAW_VERSION" || die "npm install openclaw@$OPENCLAW_VERSION failed"
  [ -f "$staging/node_modules/openclaw/openclaw.mjs" ] || die "the package has no openclaw.mjs entry"
  # The install the gateway makes, in a throwaway HOME: what it leaves in the npm cache is what a gateway needs.
  local seed_home="$staging/seed-home"
  mkdir -p "$seed_home"
  HOME="$seed_home" npm_config_cache="$staging/npm-cache" NO_COLOR=1 \
    node "$staging/node_modules/openclaw/openclaw.mjs" plugins install "@openclaw/discord@$OPENCLAW_VERSION" >"$staging/seed.log" 2>&1 \
    || die "seeding the npm cache with @openclaw/discord@$OPENCLAW_VERSION failed: $(tail -5 "$staging/seed.log")"
  rm -rf "$seed_home" "$staging/seed.log" "$staging/npm-cache/_logs"
  seeded "$staging/npm-cache" || die "the npm cache holds no @openclaw/discord after the install"
  rm -rf "$target" && mv "$staging" "$target"
}
timed install_package
write_wrapper
installed="$("$wrapper" --version 2>/dev/null)" || die "the installed openclaw does not run"
case "$installed" in
  *"$OPENCLAW_VERSION"*) ;;
  *) die "expected openclaw $OPENCLAW_VERSION, the installed command reports '$installed'" ;;
esac
write_stamp openclaw "$fingerprint"
log "openclaw $OPENCLAW_VERSION ready: $wrapper"
