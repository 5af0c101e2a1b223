/**
 * Every index Cortex keeps state in, by the name a backup files it under. The order is the order a backup opens
 * their snapshots in: what refers to something comes before what it refers to (proposals and vectors before the
 * knowledge they name, chunks and summaries before the archive read after them), so a backup taken while writes
 * go on holds no reference to a thing it lacks. A new index must be added here; the backup test compares this
 * list with what OpenSearch holds under the prefix.
 */

import { forgottenIndex } from "../knowledge/forgotten.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { tombstoneIndex } from "../knowledge/tombstones.js";
import type { CortexStore } from "../store/client.js";

export interface BackedUpIndex {
  /** The name in the backup: the index's name without Cortex's prefix and version. */
  name: string;
  /** The index (or alias) this Cortex reads and writes. */
  index: string;
}

export function backedUpIndices(store: CortexStore, maturation: MaturationIndices): BackedUpIndex[] {
  return [
    { name: "maturation", index: maturation.records },
    { name: "vectors", index: store.indices.vectors },
    { name: "chunks", index: store.indices.chunks },
    { name: "archive", index: maturation.archive },
    { name: "neighbours", index: maturation.neighbours },
    { name: "knowledge", index: store.indices.knowledge },
    { name: "dimensions", index: store.indices.dimensions },
    { name: "erasures", index: tombstoneIndex(store) },
    { name: "forgotten", index: forgottenIndex(store) },
  ];
}
