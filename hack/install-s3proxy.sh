#!/usr/bin/env bash
# S3Proxy (Apache-2.0, from Maven Central): an S3-compatible server whose filesystem backend keeps buckets in a
# folder. The backup tests write to it as to a household's S3 bucket (a NAS's S3 service, a cloud bucket), through
# the same AWS SDK and signatures, without a cloud account. The jars of its runtime classpath land in one folder;
# the test harness runs `java -cp 'lib/*' org.gaul.s3proxy.Main` (test/harness/src/services/s3.ts).
#
#   folder  $REMRAM_CACHE/s3proxy/lib   stamp "s3proxy": S3PROXY_VERSION
COMPONENT=s3proxy
source "$(dirname "$0")/lib.sh"

target="$REMRAM_CACHE/s3proxy"
if stamp_matches s3proxy "$S3PROXY_VERSION" && [ -f "$target/lib/s3proxy-$S3PROXY_VERSION.jar" ]; then
  log "s3proxy $S3PROXY_VERSION already installed"
  exit 0
fi
require_cmd mvn "Maven fetches S3Proxy and its dependencies"
require_cmd java "S3Proxy runs on the JVM (17 or newer)"
started=$SECONDS
log "fetching s3proxy $S3PROXY_VERSION and its dependencies with Maven"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
nice -n 10 mvn -B -q -Dmaven.repo.local="$REMRAM_CACHE/maven" -Ds3proxy.version="$S3PROXY_VERSION" \
  -f "$HACK_DIR/s3proxy/pom.xml" dependency:copy-dependencies -DoutputDirectory="$work/lib" >"$work/maven.log" 2>&1 ||
  die "Maven could not fetch s3proxy $S3PROXY_VERSION: $(tail -n 5 "$work/maven.log")"
rm -rf "$target"
mkdir -p "$target"
mv "$work/lib" "$target/lib"
write_stamp s3proxy "$S3PROXY_VERSION"
log "done in $((SECONDS - started))s: $(find "$target/lib" -name '*.jar' | wc -l) jars in $target/lib"
