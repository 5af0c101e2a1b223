/** The dimension policy in force: stored in the dimensions index, held in memory, replaced by PUT /dimensions. */
import { createHash } from "node:crypto";
import { type DimensionPolicy, dimensionPolicy } from "@remram/contract";
import { canonicalJson } from "../core/canonical-json.js";
import type { CortexStore } from "../store/client.js";
import { getDocument } from "../store/reads.js";
import { putDocument } from "../store/writes.js";

const policyDocumentId = "policy";

interface StoredPolicy {
  kind: "policy";
  policy: unknown;
  appliedHash: string;
  updatedAt: string;
}

export function policyHash(policy: DimensionPolicy): string {
  return `sha256:${createHash("sha256").update(canonicalJson(policy)).digest("hex")}`;
}

export class PolicyHolder {
  private current: DimensionPolicy = dimensionPolicy.parse({});
  private hash = policyHash(this.current);
  private updated: string | null = null;

  get(): DimensionPolicy {
    return this.current;
  }

  state(): { policy: DimensionPolicy; appliedHash: string; updatedAt: string | null } {
    return { policy: this.current, appliedHash: this.hash, updatedAt: this.updated };
  }

  /** Load the stored policy (start-up); a missing or unreadable one leaves the defaults in force. */
  async load(store: CortexStore): Promise<void> {
    const stored = await getDocument<StoredPolicy>(store, store.indices.dimensions, policyDocumentId);
    if (stored === undefined) return;
    const parsed = dimensionPolicy.safeParse(stored.policy);
    if (!parsed.success) return;
    this.current = parsed.data;
    this.hash = policyHash(parsed.data);
    this.updated = stored.updatedAt;
  }

  async replace(
    store: CortexStore,
    policy: DimensionPolicy,
    now: string,
  ): Promise<{ appliedHash: string; updatedAt: string }> {
    const appliedHash = policyHash(policy);
    const document: StoredPolicy = { kind: "policy", policy, appliedHash, updatedAt: now };
    await putDocument(store, store.indices.dimensions, policyDocumentId, document);
    this.current = policy;
    this.hash = appliedHash;
    this.updated = now;
    return { appliedHash, updatedAt: now };
  }
}
