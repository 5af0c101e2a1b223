/**
 * An unfinished restore, recorded in the knowledge index's mapping `_meta` before a restore writes anything and
 * removed once it has ended: it lives with the data it describes, survives a Cortex restart, and needs no index of
 * its own (which a backup would then have to hold). While it is there the same backup may be restored again over
 * what the cut-short attempt wrote (every write of a restore is idempotent: the same ids, the same hashes, the same
 * refs), another backup may not, and nothing is backed up (a backup would hold half of one).
 */
import { type CortexStore, request } from "../store/client.js";

export interface RestoreMarker {
  backupId: string;
  startedAt: string;
}

type Meta = Record<string, unknown> & { restoring?: RestoreMarker };

async function knowledgeMeta(store: CortexStore): Promise<Meta> {
  const { statusCode, body } = await request<Record<string, { mappings?: { _meta?: Meta } }>>(
    store,
    "GET",
    `/${store.indices.knowledge}/_mapping`,
    undefined,
    { ignore: [404] },
  );
  if (statusCode === 404) return {};
  return Object.values(body)[0]?.mappings?._meta ?? {};
}

export async function readRestoreMarker(store: CortexStore): Promise<RestoreMarker | undefined> {
  return (await knowledgeMeta(store)).restoring;
}

/** Record the restore now writing (a marker), or that none is unfinished (undefined). `_meta` is replaced whole. */
export async function writeRestoreMarker(
  store: CortexStore,
  marker: RestoreMarker | undefined,
): Promise<void> {
  const { restoring: _previous, ...meta } = await knowledgeMeta(store);
  await request(store, "PUT", `/${store.indices.knowledge}/_mapping`, {
    _meta: marker === undefined ? meta : { ...meta, restoring: marker },
  });
}
