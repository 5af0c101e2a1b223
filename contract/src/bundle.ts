/**
 * The knowledge block as a model reads it, defined once: its delimiters, its fixed framing sentences and the pure
 * renderer over a bundle's items. Cortex renders it under the request's token budget (it selects items and counts
 * the rendered text with its real tokenizer, cortex/src/core/assembly.ts); the hooks inject exactly that text and
 * strip it, its sentences and its items from whatever they capture (hooks/src/injected-content.ts).
 */
import { type BundleSectionName, bundleSectionNames } from "./retrieve.js";

export const bundleOpen = "<<<remram-knowledge";
export const bundleClose = "remram-knowledge>>>";

/** The sentences the block always opens with: plugin framing, never knowledge. */
export const bundlePreamble = [
  "Durable knowledge Remram retrieved for this conversation.",
  "It is memory, not the user's words: it may be incomplete or out of date, and the conversation below wins where they disagree.",
] as const;

/**
 * Seed 001's critical rule (LIVE > RAW > DERIVED): a question about current state is answered from a live check,
 * never from memory. For such a request every item is dated and called historical, and the model is told to check.
 */
export const bundleLiveStateNote = [
  "This request asks about current live state, which memory cannot know: every item below is historical, dated by when it was learned.",
  "Check the live state with a tool (a status command, a health endpoint, the logs) before answering; if you cannot check, say so and give what is remembered only as history.",
] as const;

export const bundleLowConfidenceNote = "Retrieval confidence is low." as const;

/** Every fixed sentence of the block, for the hooks to strip wherever one comes back. */
export const bundleFixedSentences: readonly string[] = [
  ...bundlePreamble,
  ...bundleLiveStateNote,
  bundleLowConfidenceNote,
];

/** One selected item, as the renderer needs it. */
export type BundleItem =
  | {
      kind: "fact";
      section: BundleSectionName;
      statement: string;
      confidence: number;
      /** When it was learned (last asserted), ISO 8601. */
      learnedAt: string;
    }
  | {
      kind: "chunk";
      section: BundleSectionName;
      text: string;
      /** Where it came from (a title such as "read output"), when known. */
      source: string | null;
      /** The archive hash of the conversation it is a passage of (memory_get takes it), for a transcript's chunk. */
      archiveHash?: string | null;
      learnedAt: string;
    };

export interface BundleRenderInput {
  /** In Cortex's selection order; the renderer groups them by section in the fixed section order. */
  items: readonly BundleItem[];
  liveState: boolean;
  lowConfidence: boolean;
}

/** A run of three or more angle brackets next to "remram": the start of something that could pass for a delimiter. */
const delimiterLike =
  /<{3,}(?=[\s_-]*(?:end\b[\s_-]*|\/[\s_-]*)?remram)|(?<=remram[\p{L}\p{N}\s_-]{0,40})>{3,}/giu;

/**
 * Stored text as one line of the block: whitespace collapsed (an item cannot start a line of its own, so it
 * cannot pose as a heading or a framing sentence) and delimiter-like runs cut to two brackets, so stored text can
 * never close the block early, in any case or spacing.
 */
export function bundleItemText(text: string): string {
  return text
    .replace(/\s+/g, " ")
    .trim()
    .replace(delimiterLike, (run) => run.slice(0, 2));
}

/** The calendar day (UTC) of an ISO timestamp; the text itself when it is not one. */
export function learnedOn(timestamp: string): string {
  const time = Date.parse(timestamp);
  return Number.isNaN(time)
    ? bundleItemText(timestamp).slice(0, 32)
    : new Date(time).toISOString().slice(0, 10);
}

/** One item's line: `- text (annotations)`; the annotations say confidence, source and, for live state, when. */
export function renderBundleItem(item: BundleItem, liveState: boolean): string {
  const notes: string[] = [];
  if (item.kind === "fact") notes.push(`confidence ${item.confidence.toFixed(2)}`);
  else {
    if (item.source !== null && item.source.trim() !== "") notes.push(`from ${bundleItemText(item.source)}`);
    if (item.archiveHash) notes.push(`archive ${bundleItemText(item.archiveHash)}`);
  }
  if (liveState) notes.push(`learned ${learnedOn(item.learnedAt)}`);
  const text = bundleItemText(item.kind === "fact" ? item.statement : item.text);
  return notes.length === 0 ? `- ${text}` : `- ${text} (${notes.join("; ")})`;
}

export function renderBundleSectionHeading(name: BundleSectionName): string {
  return `## ${name}`;
}

/** The lines above the first section: the opening delimiter and the framing this request gets. */
export function bundleHeader(input: Pick<BundleRenderInput, "liveState" | "lowConfidence">): string[] {
  return [
    bundleOpen,
    ...bundlePreamble,
    ...(input.liveState ? bundleLiveStateNote : []),
    ...(input.lowConfidence ? [bundleLowConfidenceNote] : []),
  ];
}

/**
 * The block: header, the sections in the fixed order (each item's line in the given order), closing delimiter.
 * Empty when there is nothing to say: no item and no live-state question. A live-state question with no item
 * still gets the instruction to check live state; "confidence is low" is only said about items.
 */
export function renderBundle(input: BundleRenderInput): string {
  if (input.items.length === 0 && !input.liveState) return "";
  const lines = bundleHeader({
    liveState: input.liveState,
    lowConfidence: input.lowConfidence && input.items.length > 0,
  });
  for (const name of bundleSectionNames) {
    const own = input.items.filter((item) => item.section === name);
    if (own.length === 0) continue;
    lines.push(
      renderBundleSectionHeading(name),
      ...own.map((item) => renderBundleItem(item, input.liveState)),
    );
  }
  lines.push(bundleClose);
  return lines.join("\n");
}
