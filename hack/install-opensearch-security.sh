#!/usr/bin/env bash
# A second OpenSearch home with the security plugin (TLS on HTTP and transport, basic auth), for the suite that
# tries Cortex and the operator against an external OpenSearch the way a household's bigger cluster runs.
#
#   plugin  org.opensearch.plugin:opensearch-security:$OPENSEARCH_SECURITY_VERSION@zip (Maven, as k-NN)
#   result  $REMRAM_CACHE/opensearch-$OPENSEARCH_VERSION-security: hard links to hack/install-opensearch.sh's
#           installation (same files, no second copy) plus plugins/opensearch-security   stamp "opensearch-security"
#
# The harness writes each node's certificates, users and security settings (test/harness/src/services/
# opensearch-secured.ts); this only installs the plugin. Cost: 43 MB fetched once, seconds to assemble.
COMPONENT=opensearch-security
source "$(dirname "$0")/lib.sh"

plain="$REMRAM_CACHE/opensearch-$OPENSEARCH_VERSION"
installed="$REMRAM_CACHE/opensearch-$OPENSEARCH_VERSION-security"
fingerprint="$OPENSEARCH_VERSION security $OPENSEARCH_SECURITY_VERSION"

exec 9>"$REMRAM_CACHE/stamps/opensearch-security.lock"
flock 9

[ -f "$plain/remram.env" ] || die "OpenSearch $OPENSEARCH_VERSION is not installed at $plain: run hack/install-opensearch.sh first"
if stamp_matches opensearch-security "$fingerprint" &&
  [ -f "$installed/plugins/opensearch-security/plugin-descriptor.properties" ] &&
  [ "$installed/remram.env" -nt "$plain/remram.env" ]; then
  log "opensearch $OPENSEARCH_VERSION with security $OPENSEARCH_SECURITY_VERSION already installed at $installed"
  exit 0
fi
[[ "$OPENSEARCH_SECURITY_VERSION" == "$OPENSEARCH_VERSION".* ]] ||
  die "OPENSEARCH_SECURITY_VERSION=$OPENSEARCH_SECURITY_VERSION does not belong to OPENSEARCH_VERSION=$OPENSEARCH_VERSION (hack/versions.env)"
require_cmd mvn "Maven fetches the security plugin"

started=$SECONDS
# Beside the plain installation (which may live in the service user's home): hard links need one file system.
plain_home="$(realpath "$plain")"
target="$(dirname "$plain_home")/opensearch-$OPENSEARCH_VERSION-security"
staging="$target.partial"
work="$(mktemp -d)"
trap 'rm -rf "$work" "$staging"' EXIT
owner="$(stat -c %U "$plain_home")"
java_home="$(sed -n 's/^OPENSEARCH_JAVA_HOME=//p' "$plain_home/remram.env")"

log "fetching the security plugin $OPENSEARCH_SECURITY_VERSION with Maven"
if ! nice -n 10 mvn -B -q -U -Dmaven.repo.local="$REMRAM_CACHE/maven" -f "$HACK_DIR/opensearch/security/pom.xml" \
  dependency:copy-dependencies -Dsecurity.version="$OPENSEARCH_SECURITY_VERSION" -Doutput="$work" \
  >"$work/maven.log" 2>&1; then
  sed 's/\x1b\[[0-9;]*m//g' "$work/maven.log" | grep -m 1 -F '[ERROR] Failed' >&2 || tail -n 5 "$work/maven.log" >&2
  die "Maven could not fetch opensearch-security $OPENSEARCH_SECURITY_VERSION: is the registry reachable?"
fi

rm -rf "$staging"
cp -al "$plain_home" "$staging"
# The plugin installer adds files only (plugins/, config/opensearch-security/); none of the linked ones changes.
OPENSEARCH_JAVA_HOME="$java_home" "$staging/bin/opensearch-plugin" install --batch \
  "file://$work/opensearch-security-$OPENSEARCH_SECURITY_VERSION.zip" >"$work/plugin.log" 2>&1 ||
  die "opensearch-plugin install of the security plugin failed: $(tail -n 5 "$work/plugin.log")"
chmod +x "$staging/plugins/opensearch-security/tools/"*.sh
# A fresh remram.env (not a link): the stamp check above compares it with the plain installation's.
rm -f "$staging/remram.env"
sed 's#install-opensearch.sh#install-opensearch-security.sh#' "$plain_home/remram.env" >"$staging/remram.env"
[ "$(id -u)" = 0 ] && chown -R "$owner:" "$staging"
rm -rf "$target"
mv "$staging" "$target"
[ "$target" = "$installed" ] || ln -sfn "$target" "$installed"
write_stamp opensearch-security "$fingerprint"
log "done in $((SECONDS - started))s: $installed"
