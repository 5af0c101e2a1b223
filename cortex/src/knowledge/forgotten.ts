/**
 * Tombstones of forgotten knowledge objects, in `<prefix>-forgotten`: one document per digest (core/forgotten.ts)
 * of a forgotten object's id and of its statement within its owner, with when it was forgotten. Ingest refuses an
 * event that would store such an object again, reflection drops such an object from its plan. Apart from person
 * erasure's tombstones (`-erasures`, one per person): these are backed up with the other indices, and each forget's
 * are copied into the backup destination too (`forgotten.json`), so a restore of an older backup forgets again.
 * Read by id (a GET sees a write at once), so nothing here waits for a refresh.
 */
import type { KnowledgeObject } from "@remram/contract";
import { type ForgottenMark, forgottenMarks } from "../core/forgotten.js";
import { type CortexStore, request } from "../store/client.js";
import { scanDocuments } from "../store/reads.js";
import { bulk, bulkFailure } from "../store/writes.js";

export type { ForgottenMark };

export function forgottenIndex(store: CortexStore): string {
  return store.indices.knowledge.replace(/-knowledge$/, "-forgotten");
}

const mappings = {
  dynamic: false,
  properties: { subject: { type: "keyword" }, kind: { type: "keyword" }, forgottenAt: { type: "date" } },
};

/** Create the index if it is missing (the first forget, or a restore that writes a backup's tombstones into it). */
export async function ensureForgottenIndex(store: CortexStore): Promise<string> {
  const index = forgottenIndex(store);
  const exists = await request(store, "HEAD", `/${index}`, undefined, { ignore: [404] });
  if (exists.statusCode === 404) {
    const settings = { index: { number_of_shards: 1, number_of_replicas: 0 } };
    await request(store, "PUT", `/${index}`, { settings, mappings }, { ignore: [400], retries: 2 });
  }
  return index;
}

/** Record the tombstones of these objects and return them; durable when this resolves, and read by id at once. */
export async function recordForgotten(
  store: CortexStore,
  objects: readonly Pick<KnowledgeObject, "id" | "statement" | "scope" | "owner">[],
  forgottenAt: string,
): Promise<ForgottenMark[]> {
  const marks = forgottenMarks(objects, forgottenAt);
  await recordForgottenMarks(store, marks);
  return marks;
}

/** Record tombstones as they are (a restore's replay of the destination's copy); a subject's document is replaced. */
export async function recordForgottenMarks(
  store: CortexStore,
  marks: readonly ForgottenMark[],
): Promise<void> {
  if (marks.length === 0) return;
  const index = await ensureForgottenIndex(store);
  const lines = marks.flatMap((mark) => [{ index: { _index: index, _id: mark.subject } }, mark]);
  const results = await bulk(store, lines, { timeoutMs: 30_000 });
  const failed = results.filter((result) => result.error !== undefined);
  if (failed.length > 0) throw bulkFailure("forget tombstones not recorded", failed);
}

/** Every tombstone (after a backup, to catch the destination's copy up with forgets it missed). */
export async function readForgottenMarks(store: CortexStore): Promise<ForgottenMark[]> {
  const index = forgottenIndex(store);
  const exists = await request(store, "HEAD", `/${index}`, undefined, { ignore: [404] });
  if (exists.statusCode === 404) return [];
  const marks: ForgottenMark[] = [];
  for await (const hits of scanDocuments<ForgottenMark>(store, index, { match_all: {} }))
    for (const hit of hits) marks.push(hit._source);
  return marks;
}

/** Of these subjects, the forgotten ones with their tombstones. */
export async function forgottenAmong(
  store: CortexStore,
  subjects: Iterable<string>,
): Promise<Map<string, ForgottenMark>> {
  const ids = [...new Set(subjects)];
  const found = new Map<string, ForgottenMark>();
  if (ids.length === 0) return found;
  const { statusCode, body } = await request<{
    docs?: { _id: string; found: boolean; _source?: ForgottenMark }[];
  }>(store, "POST", `/${forgottenIndex(store)}/_mget`, { ids }, { ignore: [404] });
  // No index yet: nothing was ever forgotten.
  if (statusCode === 404) return found;
  for (const doc of body.docs ?? []) if (doc.found && doc._source) found.set(doc._id, doc._source);
  return found;
}
