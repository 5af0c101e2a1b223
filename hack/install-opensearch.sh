#!/usr/bin/env bash
# OpenSearch with the k-NN plugin (Lucene HNSW engine) for the test bed, from Maven Central artifacts only.
#
#   distribution  org.opensearch.distribution.integ-test-zip:opensearch:$OPENSEARCH_VERSION@zip
#                 (the one runnable distribution on Maven; it ships only the transport-netty4 module)
#   modules       lang-painless (k-NN extends it), analysis-common (english analyzer, stemming), mapper-extras
#                 (rank_feature, scaled_float, ...), reindex (_reindex, _update_by_query, _delete_by_query),
#                 each assembled from its Maven jars (hack/opensearch/maven/) + hack/opensearch/modules/
#   plugin        org.opensearch.plugin:opensearch-knn:$OPENSEARCH_KNN_VERSION@zip via opensearch-plugin install
#   result        $REMRAM_CACHE/opensearch-$OPENSEARCH_VERSION, owned by the user that runs it,
#                 with remram.env (the JDK and that user) for the test harness       stamp "opensearch"
#
# OpenSearch refuses to run as root: as root this creates the system user $REMRAM_SERVICE_USER (default remram).
# If that user cannot reach $REMRAM_CACHE (a cache under a private /root), the installation goes to the user's
# home and $REMRAM_CACHE/opensearch-$OPENSEARCH_VERSION becomes a link to it.
# Before it is stamped, the node is started once and checked: plugins loaded, english stemming, painless, a
# Lucene k-NN query, delete-by-query.
COMPONENT=opensearch
source "$(dirname "$0")/lib.sh"

service_user="${REMRAM_SERVICE_USER:-remram}"
modules=(lang-painless analysis-common mapper-extras reindex)
fingerprint="$OPENSEARCH_VERSION k-NN $OPENSEARCH_KNN_VERSION modules ${modules[*]}"
maven_repo="$REMRAM_CACHE/maven"
templates="$HACK_DIR/opensearch"
installed="$REMRAM_CACHE/opensearch-$OPENSEARCH_VERSION"

# Two setups at once (parallel clones sharing the cache) must not assemble the same directory.
exec 9>"$REMRAM_CACHE/stamps/opensearch.lock"
flock 9

# The JDK recorded at install time must still be there (a JDK upgrade removes the old directory).
recorded_java_home="$(sed -n 's/^OPENSEARCH_JAVA_HOME=//p' "$installed/remram.env" 2>/dev/null || true)"
if stamp_matches opensearch "$fingerprint" && [ -x "$recorded_java_home/bin/java" ] &&
  [ -f "$installed/plugins/opensearch-knn/plugin-descriptor.properties" ]; then
  log "opensearch $OPENSEARCH_VERSION with k-NN $OPENSEARCH_KNN_VERSION already installed at $installed"
  exit 0
fi

started=$SECONDS
require_cmd mvn "Maven fetches the distribution, the modules and the k-NN plugin"
require_cmd unzip "to unpack the distribution"
require_cmd curl "to check the node once it is assembled"
require_cmd python3 "to pick a free port for the check"
[[ "$OPENSEARCH_KNN_VERSION" == "$OPENSEARCH_VERSION".* ]] ||
  die "OPENSEARCH_KNN_VERSION=$OPENSEARCH_KNN_VERSION does not belong to OPENSEARCH_VERSION=$OPENSEARCH_VERSION (hack/versions.env): a plugin loads only on the exact OpenSearch version it was built for"

# ---- JDK: OpenSearch 2.x needs the Java Security Manager, which JDK 24 removed; 11 to 23 work.
java_major() { "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'; }
find_java_home() {
  local on_path="" candidate major
  if command -v java >/dev/null 2>&1; then on_path="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"; fi
  for candidate in "${OPENSEARCH_JAVA_HOME:-}" "${JAVA_HOME:-}" "$on_path" /usr/lib/jvm/*; do
    [ -n "$candidate" ] && [ -x "$candidate/bin/java" ] || continue
    major="$(java_major "$candidate")"
    if [[ "$major" =~ ^[0-9]+$ ]] && [ "$major" -ge 11 ] && [ "$major" -le 23 ]; then
      printf '%s' "$candidate"
      return 0
    fi
  done
  return 1
}
java_home="$(find_java_home)" ||
  die "no JDK 11-23 found (looked at OPENSEARCH_JAVA_HOME, JAVA_HOME, java on PATH, /usr/lib/jvm): OpenSearch $OPENSEARCH_VERSION needs the Security Manager that JDK 24+ no longer has"
log "using the JDK at $java_home (Java $(java_major "$java_home"))"

# ---- The user OpenSearch runs as.
as_root=false
[ "$(id -u)" = 0 ] && as_root=true
if $as_root; then
  require_cmd setpriv "to run OpenSearch as $service_user (util-linux)"
  if ! id -u "$service_user" >/dev/null 2>&1; then
    log "creating the system user $service_user: OpenSearch refuses to run as root"
    useradd --system --user-group --create-home --home-dir "/var/lib/$service_user" \
      --shell /usr/sbin/nologin "$service_user" || die "could not create the user $service_user"
  fi
  run_as="$service_user"
else
  run_as="$(id -un)"
fi
as_service_user=()
$as_root && as_service_user=(setpriv --reuid="$service_user" --regid="$service_user" --init-groups --)

install_parent="$REMRAM_CACHE"
if ! "${as_service_user[@]}" test -x "$REMRAM_CACHE"; then
  install_parent="$(getent passwd "$service_user" | cut -d: -f6)"
  [ -d "$install_parent" ] || die "$service_user has no home directory ($install_parent) to install into; set REMRAM_CACHE to a directory that user can reach"
  log "$service_user cannot reach $REMRAM_CACHE (a parent directory is private): installing under $install_parent, linked from the cache"
fi
target="$install_parent/opensearch-$OPENSEARCH_VERSION"
staging="$install_parent/.opensearch-$OPENSEARCH_VERSION.partial"
work="$(mktemp -d)"
node_pid=""
cleanup() {
  if [ -n "$node_pid" ]; then kill -KILL -- "-$node_pid" 2>/dev/null || true; fi
  rm -rf "$work" "$staging"
}
trap cleanup EXIT

# ---- Fetch: every artifact through the Maven client in one run, into the cache's own local repository.
log "fetching the distribution, k-NN and the module jars with Maven (cached in $maven_repo)"
# One run over a throwaway reactor: every child copies its runtime dependencies to $work/<child>/.
# -U: a version missing earlier is looked up again instead of failing from Maven's cached "not found".
if ! nice -n 10 mvn -B -q -U -Dmaven.repo.local="$maven_repo" -f "$templates/maven/pom.xml" \
  dependency:copy-dependencies -Dopensearch.version="$OPENSEARCH_VERSION" -Dknn.version="$OPENSEARCH_KNN_VERSION" \
  -Doutput="$work" >"$work/maven.log" 2>&1; then
  # Debian's Maven colours its output even in batch mode; strip the escapes.
  sed 's/\x1b\[[0-9;]*m//g' "$work/maven.log" | grep -m 1 -F '[ERROR] Failed' >&2 || tail -n 5 "$work/maven.log" >&2
  die "Maven could not fetch OpenSearch $OPENSEARCH_VERSION / k-NN $OPENSEARCH_KNN_VERSION: is the registry reachable, and do both versions exist there?"
fi
downloads="$work/downloads"
log "fetched after $((SECONDS - started))s"

# ---- Assemble.
log "assembling $target"
rm -rf "$staging" && mkdir -p "$staging"
unzip -q "$downloads/opensearch-$OPENSEARCH_VERSION.zip" -d "$staging"
home="$staging/opensearch-$OPENSEARCH_VERSION"
[ -x "$home/bin/opensearch" ] || die "the distribution zip has no opensearch-$OPENSEARCH_VERSION/bin/opensearch"
for module in "${modules[@]}"; do
  # A jar the distribution's lib/ already has would fail the jar-hell check at startup: say which one now.
  for jar in "$work/$module"/*.jar; do
    [ ! -e "$home/lib/$(basename "$jar")" ] ||
      die "module $module would ship $(basename "$jar"), which lib/ already has: exclude it in hack/opensearch/maven/$module/pom.xml"
  done
  mkdir -p "$home/modules/$module"
  cp "$work/$module"/*.jar "$home/modules/$module/"
  for file in "$templates/modules/$module"/*; do
    sed "s/@OPENSEARCH_VERSION@/$OPENSEARCH_VERSION/g" "$file" >"$home/modules/$module/$(basename "$file")"
  done
done
# k-NN extends lang-painless, so the module must exist first; --batch accepts the plugin's extra permissions.
OPENSEARCH_JAVA_HOME="$java_home" "$home/bin/opensearch-plugin" install --batch \
  "file://$downloads/opensearch-knn-$OPENSEARCH_KNN_VERSION.zip" >"$work/plugin.log" 2>&1 ||
  die "opensearch-plugin install of k-NN failed: $(tail -n 5 "$work/plugin.log")"
cat >"$home/remram.env" <<EOF
# Written by hack/install-opensearch.sh and read by the test harness (test/harness/src/services/opensearch.ts).
OPENSEARCH_JAVA_HOME=$java_home
OPENSEARCH_RUN_AS=$run_as
EOF
$as_root && chown -R "$service_user:$service_user" "$home"

# ---- Check the assembled node before it is stamped.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
check_node() {
  local node="$work/check" http_port transport_port url
  http_port="$(free_port)"
  transport_port="$(free_port)"
  url="http://127.0.0.1:$http_port"
  mkdir -p "$node/config" "$node/data" "$node/logs" "$node/tmp"
  cp -r "$home/config/." "$node/config/"
  # bin/opensearch-env changes into the installation, where the relative GC log and dump paths would land.
  sed -i -e "s#file=logs/#file=$node/logs/#" -e "s#ErrorFile=logs/#ErrorFile=$node/logs/#" \
    -e "s#^-XX:HeapDumpPath=data\$#-XX:HeapDumpPath=$node/data#" "$node/config/jvm.options"
  cat >"$node/config/opensearch.yml" <<EOF
cluster.name: remram-install-check
node.name: install-check
discovery.type: single-node
network.host: 127.0.0.1
http.port: $http_port
transport.port: $transport_port
path.data: $node/data
path.logs: $node/logs
cluster.routing.allocation.disk.threshold_enabled: false
EOF
  $as_root && chown -R "$service_user:$service_user" "$work"
  log "starting the node once on $url to check it"
  # The distribution's jvm.options writes gc.log and heap dumps relative to the working directory.
  # In its own session, so the whole process group can be stopped. C1 only: it starts twice as fast on 2 cores.
  (cd "$node" && OPENSEARCH_JAVA_HOME="$java_home" OPENSEARCH_PATH_CONF="$node/config" OPENSEARCH_TMPDIR="$node/tmp" \
    OPENSEARCH_JAVA_OPTS="-Xms512m -Xmx512m -XX:TieredStopAtLevel=1" \
    exec setsid "${as_service_user[@]}" "$home/bin/opensearch" >"$node/stdout.log" 2>&1) &
  node_pid=$!
  local node_started=$SECONDS deadline=$((SECONDS + 180))
  until curl -sf "$url/_cluster/health?wait_for_status=yellow&timeout=2s" >/dev/null 2>&1; do
    kill -0 "$node_pid" 2>/dev/null || die "the node exited during startup:
$(tail -n 25 "$node/stdout.log")"
    [ $SECONDS -lt $deadline ] || die "the node was not healthy within 180 s:
$(tail -n 25 "$node/stdout.log")"
    sleep 1
  done
  log "node healthy after $((SECONDS - node_started))s; running the checks"

  local plugins
  plugins="$(curl -sf "$url/_nodes/plugins?filter_path=nodes.*.plugins.name,nodes.*.modules.name")"
  for name in opensearch-knn "${modules[@]}"; do
    grep -q "\"$name\"" <<<"$plugins" || die "$name is not loaded: $plugins"
  done
  curl -sf -H 'content-type: application/json' "$url/_analyze" \
    -d '{"analyzer":"english","text":"running"}' | grep -q '"token":"run"' ||
    die "the english analyzer does not stem 'running' to 'run'"
  curl -sf -H 'content-type: application/json' "$url/_scripts/painless/_execute" \
    -d '{"script":{"source":"1 + 1"}}' | grep -q '"result":"2"' || die "painless does not run scripts"
  local json=(-sf -H 'content-type: application/json')
  curl "${json[@]}" -X PUT "$url/knn-check" -d '{
      "settings": {"index": {"knn": true, "number_of_shards": 1, "number_of_replicas": 0}},
      "mappings": {"properties": {"vector": {"type": "knn_vector", "dimension": 3,
        "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"}}}}}' >/dev/null ||
    die "could not create a k-NN index with the Lucene engine"
  curl "${json[@]}" -X PUT "$url/knn-check/_doc/east" -d '{"vector": [1, 0, 0]}' >/dev/null &&
    curl "${json[@]}" -X PUT "$url/knn-check/_doc/north?refresh=true" -d '{"vector": [0, 1, 0]}' >/dev/null ||
    die "could not index vectors"
  curl "${json[@]}" "$url/knn-check/_search" \
    -d '{"size": 1, "query": {"knn": {"vector": {"vector": [0.1, 0.9, 0], "k": 1}}}}' | grep -q '"_id":"north"' ||
    die "the k-NN query did not return the nearest vector"
  curl "${json[@]}" -X POST "$url/knn-check/_delete_by_query?refresh=true" -d '{"query": {"ids": {"values": ["east"]}}}' |
    grep -q '"deleted":1' || die "_delete_by_query (reindex module) did not delete the document"
  log "checks passed: k-NN (Lucene HNSW), painless, english stemming, delete-by-query; loaded: ${modules[*]}"

  kill -TERM -- "-$node_pid" 2>/dev/null || true
  local stop_deadline=$((SECONDS + 30))
  while kill -0 -- "-$node_pid" 2>/dev/null && [ $SECONDS -lt $stop_deadline ]; do sleep 0.5; done
  kill -KILL -- "-$node_pid" 2>/dev/null || true
  node_pid=""
}
check_node

# ---- Swap it in, then stamp. Two renames, so nodes already running from the old tree find a complete tree at
# every moment; the old one goes with the staging dir.
if [ -e "$target" ]; then mv "$target" "$staging/previous"; fi
mv "$home" "$target"
if [ "$target" != "$installed" ]; then
  rm -rf "$installed"
  ln -sfn "$target" "$installed"
fi
write_stamp opensearch "$fingerprint"
log "opensearch $OPENSEARCH_VERSION with k-NN $OPENSEARCH_KNN_VERSION ready at $installed in $((SECONDS - started))s (runs as $run_as)"
