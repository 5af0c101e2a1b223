import { bundleLiveStateNote, bundleOpen, liveStateIntent } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { type RetrieveResponse, RetrieveResponseSchema } from "./cortex-contract.js";
import {
  blockBegin,
  blocksCloud,
  isPrivateItem,
  itemsWithheldFrom,
  knowledgeBlock,
  retrieveIntent,
} from "./injection.js";
import { renderedBundle } from "./testing/rendered-bundle.js";

function bundle(partial: Partial<Record<keyof RetrieveResponse, unknown>>): RetrieveResponse {
  return RetrieveResponseSchema.parse(partial);
}

const sample = bundle({
  facts: [
    {
      id: "f1",
      statement: "Alice's router is at 192.0.2.1",
      type: "fact",
      scope: "household",
      confidence: 0.9,
    },
    {
      id: "c1",
      statement: "Never schedule meetings before 9am",
      type: "constraint",
      scope: "user",
      confidence: 0.8,
    },
    { id: "p1", statement: "Prefers metric units", type: "preference", scope: "household" },
    { id: "d1", statement: "Chose Postgres for the photo index", type: "decision", scope: "shared" },
  ],
  chunks: [{ id: "k1", text: "Earlier: we discussed backups on the NAS.", scope: "household" }],
});

describe("the knowledge block the plugin injects", () => {
  it("is Cortex's rendered text byte for byte, with Cortex's token count", () => {
    const answer = renderedBundle({
      facts: [{ id: "f", statement: "Alice's cat\nis called Miso.", type: "fact", confidence: 0.9 }],
      chunks: [{ id: "k", text: "we agreed the NAS backs up nightly" }],
    });
    const built = knowledgeBlock(answer, 1_200);
    if (!built.ok) throw new Error(built.reason);
    expect(built.block.text).toBe(answer.bundle.text);
    expect(built.block.tokens).toBe(answer.bundle.tokens);
    expect(built.block.text.startsWith(blockBegin)).toBe(true);
    expect(blockBegin).toBe(bundleOpen);
    // Each item's text as the block shows it: one line, for the ledger that keeps it out of captures.
    expect(built.block.itemTexts).toEqual([
      "Alice's cat is called Miso.",
      "we agreed the NAS backs up nightly",
    ]);
    for (const text of built.block.itemTexts) expect(built.block.text).toContain(text);
  });

  it("is nothing when Cortex rendered nothing, or a block over the ceiling the plugin asked for", () => {
    expect(knowledgeBlock(bundle({ facts: sample.facts }), 1_200)).toEqual({
      ok: false,
      reason: "nothing_retrieved",
    });
    const answer = renderedBundle({ facts: [{ id: "f", statement: "x y z", type: "fact" }] });
    expect(knowledgeBlock(answer, answer.bundle.tokens - 1)).toEqual({ ok: false, reason: "over_budget" });
    expect(knowledgeBlock(answer, answer.bundle.tokens).ok).toBe(true);
  });

  it("injects Cortex's live-check instruction for a live-state question even without items", () => {
    const answer = renderedBundle({ liveState: { detected: true, reason: 'phrase "right now"' } });
    const built = knowledgeBlock(answer, 1_200);
    if (!built.ok) throw new Error(built.reason);
    for (const sentence of bundleLiveStateNote) expect(built.block.text).toContain(sentence);
    expect(built.block.itemTexts).toEqual([]);
  });
});

describe("the intent sent with /retrieve", () => {
  it("is live_state for a question about current live state, and left to Cortex otherwise", () => {
    expect(retrieveIntent("Is the backup running right now?")).toBe(liveStateIntent);
    expect(retrieveIntent("is the gateway up?")).toBe(liveStateIntent);
    expect(retrieveIntent("What is the current OpenSearch version?")).toBe(liveStateIntent);
    expect(retrieveIntent("Why did we choose OpenSearch?")).toBeUndefined();
    expect(retrieveIntent("What is my cat called?")).toBeUndefined();
  });
});

describe("privacy of knowledge items", () => {
  it("treats private and secret levels as private, and user scope when no level is known", () => {
    expect(isPrivateItem({ privacy: "private" })).toBe(true);
    expect(isPrivateItem({ privacy: "secret", scope: "shared" })).toBe(true);
    expect(isPrivateItem({ privacy: "household", scope: "user" })).toBe(false);
    expect(isPrivateItem({ scope: "user" })).toBe(true);
    expect(isPrivateItem({ scope: "household" })).toBe(false);
  });

  it("treats an item whose privacy Cortex did not report as private", () => {
    expect(isPrivateItem({})).toBe(true);
  });

  it("counts the items a cloud model must not read unless consent allows, and none for a local model", () => {
    expect(blocksCloud(sample, false)).toBe(true);
    expect(blocksCloud(sample, true)).toBe(false);
    expect(itemsWithheldFrom(sample, "local", false)).toBe(0);
    expect(itemsWithheldFrom(sample, "cloud", false)).toBe(1);
    expect(itemsWithheldFrom(sample, "cloud", true)).toBe(0);
    const consented = bundle({
      facts: [{ id: "c", statement: "x y z", privacy: "private", consent: { cloud: true } }],
    });
    expect(itemsWithheldFrom(consented, "cloud", false)).toBe(0);
  });
});
