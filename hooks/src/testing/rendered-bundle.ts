import { type BundleItem, type BundleSectionName, renderBundle } from "@remram/contract";
import { type RetrieveResponse, RetrieveResponseSchema } from "../cortex-contract.js";

const sectionOfType: Record<string, BundleSectionName> = {
  constraint: "constraints",
  preference: "preferences",
  decision: "decisions",
  principle: "principles",
};

export const fixtureLearnedAt = "2026-03-04T10:00:00.000Z";

/**
 * A /retrieve answer shaped as Cortex gives it, for unit tests: the items, and the block rendered from them with
 * the contract's renderer (Cortex's own). `tokens` stands in for Cortex's count: a character-based overestimate,
 * since the hooks never count tokens themselves.
 */
export function renderedBundle(partial: Record<string, unknown>): RetrieveResponse {
  const parsed = RetrieveResponseSchema.parse(partial);
  const items: BundleItem[] = [
    ...parsed.facts.map(
      (fact): BundleItem => ({
        kind: "fact",
        section: sectionOfType[fact.type] ?? "facts",
        statement: fact.statement,
        confidence: fact.confidence ?? 0.5,
        learnedAt: fixtureLearnedAt,
      }),
    ),
    ...parsed.chunks.map(
      (chunk): BundleItem => ({
        kind: "chunk",
        section: chunk.level === "L0" ? "background" : "context",
        text: chunk.text,
        source: null,
        learnedAt: fixtureLearnedAt,
      }),
    ),
  ];
  const text = renderBundle({
    items,
    liveState: parsed.liveState.detected,
    lowConfidence: parsed.lowConfidence,
  });
  return { ...parsed, bundle: { text, tokens: Math.ceil(text.length / 2) } };
}
