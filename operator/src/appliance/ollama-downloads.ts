/**
 * Ollama (0.24) keeps an interrupted model download as `<blob>-partial` plus one record per part,
 * `<blob>-partial-<n>`, which it rewrites in place (truncate, then write). A stop between those two steps, about
 * one SIGTERM in three during a pull, leaves a record empty, and from then on every pull of that model fails with
 * "EOF" (Ollama reads all records before downloading and deletes partial blobs only after an hour). An empty record
 * cannot be rebuilt (its offset and size are gone), and dropping it alone would make Ollama assemble the blob
 * without that part, so the step before `ollama serve` removes that blob's partial data and every record of it: the
 * next pull downloads that blob afresh, and every other blob resumes where it stopped.
 */
export const repairInterruptedDownloadsScript = `set -eu
blobs="\${OLLAMA_MODELS:?}/blobs"
[ -d "$blobs" ] || exit 0
find "$blobs" -maxdepth 1 -type f -name 'sha256-*-partial-*' -size 0 | while read -r record; do
  blob="\${record%-partial-*}"
  echo "removing the interrupted download of \${blob##*/}: its part record \${record##*/} is empty"
  rm -f -- "$blob-partial" "$blob"-partial-*
done`;

/** The Ollama pod's init container running the repair with the Ollama image's own shell and find. */
export function repairDownloadsContainer(image: string, modelsDir: string, securityContext: object) {
  return {
    name: "repair-downloads",
    image,
    command: ["sh", "-c", repairInterruptedDownloadsScript],
    env: [{ name: "OLLAMA_MODELS", value: modelsDir }],
    securityContext,
    volumeMounts: [{ name: "models", mountPath: modelsDir }],
  };
}
