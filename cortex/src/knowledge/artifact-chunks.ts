/**
 * The workspace repository's side of an erasure or a forget: what a history rewrite reports (the repository's
 * eraser, GitPromoter.erase, is wired in by maturation.ts), and the artifact chunks that follow the rewritten files.
 */
import type { ErasedContent } from "../core/erasure.js";
import { type CortexStore, request as storeRequest } from "../store/client.js";
import type { Embedder } from "../store/embedder.js";
import { scanFields } from "./erasure.js";
import { repointCommits } from "./erasure-records.js";
import type { MaturationIndices } from "./records.js";

/** What the workspace repository reports after erasing. */
export interface HistoryErasure {
  commitsRewritten: number;
  commitsDropped: number;
  blobsRewritten: number;
  /** Working-tree files changed: new content, or null when deleted. */
  workspace: ReadonlyMap<string, string | null>;
  /** Old commit id → new one, or null when dropped. */
  commits: ReadonlyMap<string, string | null>;
}

/** The repository's eraser; absent, there is no repository to erase from. */
export type HistoryEraser = (erased: ErasedContent) => Promise<HistoryErasure>;

/**
 * Artifact chunks follow the rewritten workspace: a deleted file's chunk goes, a rewritten one's text is replaced
 * and embedded again (the old vector was computed from the erased text too; without a model it is dropped).
 */
export async function reindexArtifacts(
  { store, embedder }: { store: CortexStore; embedder: Embedder | null },
  workspace: ReadonlyMap<string, string | null>,
): Promise<number> {
  let changed = 0;
  for (const [path, content] of workspace) {
    const query = { bool: { filter: [{ term: { sourceKind: "artifact" } }, { term: { path } }] } };
    for await (const hits of scanFields<Record<string, unknown>>(
      store,
      store.indices.chunks,
      query,
      undefined,
    ))
      for (const hit of hits) {
        changed += 1;
        if (content === null) {
          await storeRequest(
            store,
            "DELETE",
            `/${store.indices.chunks}/_doc/${hit._id}?refresh=true`,
            undefined,
            {
              ignore: [404],
            },
          );
          continue;
        }
        const { embedding: _erased, ...rest } = hit._source;
        const text = content.slice(0, 16_000);
        const vector = embedder
          ? await embedder.embedMany([text]).then(
              (v) => v[0] ?? null,
              () => null,
            )
          : null;
        const document = {
          ...rest,
          text,
          ...(vector && { embedding: vector }),
          embeddingModel: vector ? (embedder?.model ?? null) : null,
        };
        await storeRequest(store, "PUT", `/${store.indices.chunks}/_doc/${hit._id}?refresh=true`, document);
      }
  }
  return changed;
}

/** What rewriting the repository's history for an erasure or a forget changed, as their counts name it. */
export interface HistoryCounts {
  gitBlobsRewritten: number;
  gitCommitsRewritten: number;
  gitCommitsDropped: number;
  workspaceFilesChanged: number;
  artifactChunksChanged: number;
}

/**
 * The repository's history without the erased content, the artifact chunks after the rewritten workspace, and the
 * records that named rewritten commits pointing at their replacements: erasure's and forget's shared step.
 */
export async function eraseFromHistory(
  context: { store: CortexStore; embedder: Embedder | null },
  indices: MaturationIndices,
  history: HistoryEraser,
  erased: ErasedContent,
): Promise<HistoryCounts> {
  const rewrite = await history(erased);
  const counts = {
    gitBlobsRewritten: rewrite.blobsRewritten,
    gitCommitsRewritten: rewrite.commitsRewritten,
    gitCommitsDropped: rewrite.commitsDropped,
    workspaceFilesChanged: rewrite.workspace.size,
    artifactChunksChanged: await reindexArtifacts(context, rewrite.workspace),
  };
  await repointCommits(context.store, indices, rewrite.commits);
  return counts;
}
