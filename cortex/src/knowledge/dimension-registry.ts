/**
 * The dimensions dream promoted (seed 000 §3.3.3 "Dimension Registry"): canonical beside the DimensionPolicy's
 * own, kept as documents of their own in the dimensions index (`promoted:<name>`). The policy document stays the
 * operator's, byte for byte — its hash is how the operator knows Cortex holds what it sent — so a promotion never
 * rewrites it. No sample values are kept here: those are people's data and stay with the candidate, where an
 * erasure prunes them.
 */
import type { CortexStore } from "../store/client.js";
import { scanDocuments } from "../store/reads.js";
import { bulk, bulkFailure } from "../store/writes.js";

export interface RegisteredDimension {
  name: string;
  /** Reflection's reports of it when it was promoted. */
  occurrences: number;
  /** Mean confidence of the live objects carrying it when it was promoted. */
  meanConfidence: number;
  promotedAt: string;
  /** The dream cycle that promoted it. */
  cycleId: string;
}

interface StoredRegistration extends RegisteredDimension {
  kind: "promoted";
}

/** Every promoted dimension, by name. */
export async function listRegisteredDimensions(store: CortexStore): Promise<RegisteredDimension[]> {
  const found: RegisteredDimension[] = [];
  for await (const page of scanDocuments<StoredRegistration>(store, store.indices.dimensions, {
    term: { kind: "promoted" },
  })) {
    for (const { _source } of page) {
      const { kind: _kind, ...registration } = _source;
      found.push(registration);
    }
  }
  return found.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** Add promotions to the registry; a name already there keeps its first registration. */
export async function registerDimensions(
  store: CortexStore,
  registrations: readonly RegisteredDimension[],
): Promise<void> {
  if (registrations.length === 0) return;
  const lines = registrations.flatMap((registration) => [
    { create: { _index: store.indices.dimensions, _id: `promoted:${registration.name}` } },
    { kind: "promoted", ...registration } satisfies StoredRegistration,
  ]);
  const results = await bulk(store, lines, { timeoutMs: 30_000 });
  const failed = results.filter((r) => r.status >= 300 && r.status !== 409);
  if (failed.length > 0) throw bulkFailure("registering promoted dimensions failed", failed);
}
