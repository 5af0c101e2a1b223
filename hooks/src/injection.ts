import type { RetrievedChunk, RetrievedFact, RetrieveResponse } from "./cortex-contract.js";

/**
 * The knowledge block the hooks put into a prompt. It goes into `appendSystemContext`: OpenClaw places that
 * after its core system prompt and the workspace bootstrap files and before the session transcript, which
 * is seed 000 §4.3's order (core prompt → bootstrap → Remram bundle → transcript).
 */

export const blockBegin = "<<<remram-knowledge";
export const blockEnd = "remram-knowledge>>>";

/** Cortex's fixed section order (@remram/contract's bundleSectionNames), then grounding text. */
const sectionOrder: readonly { type: string; title: string }[] = [
  { type: "constraint", title: "Constraints" },
  { type: "preference", title: "Preferences" },
  { type: "decision", title: "Decisions" },
  { type: "principle", title: "Principles" },
  { type: "fact", title: "Facts" },
];

const maxItemChars = 600;

/** A cheap, conservative token estimate (about 3.5 characters a token for English; rounds up). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 3.5);
}

type KnowledgeItem = Pick<RetrievedFact, "scope" | "privacy" | "consent">;

const privateLevels = new Set(["private", "secret"]);

/**
 * Private-scope knowledge: a private privacy level; without a level, user scope; without either, private,
 * because what cannot be shown to be shareable is treated as not shareable.
 */
export function isPrivateItem(item: KnowledgeItem): boolean {
  if (item.privacy !== undefined) return privateLevels.has(item.privacy);
  if (item.scope !== undefined) return item.scope === "user";
  return true;
}

export function mayLeaveTheBox(item: KnowledgeItem, allowPrivateToCloud: boolean): boolean {
  return !isPrivateItem(item) || allowPrivateToCloud || item.consent?.cloud === true;
}

/** Whether this bundle, injected as retrieved, holds anything a cloud model must not see. */
export function blocksCloud(bundle: RetrieveResponse, allowPrivateToCloud: boolean): boolean {
  return [...bundle.facts, ...bundle.chunks].some((item) => !mayLeaveTheBox(item, allowPrivateToCloud));
}

/** Drop what must not reach a cloud model; the local model sees everything retrieved. */
export function filterForModel(
  bundle: RetrieveResponse,
  target: "local" | "cloud",
  allowPrivateToCloud: boolean,
): RetrieveResponse {
  if (target === "local") return bundle;
  return {
    ...bundle,
    facts: bundle.facts.filter((fact) => mayLeaveTheBox(fact, allowPrivateToCloud)),
    chunks: bundle.chunks.filter((chunk) => mayLeaveTheBox(chunk, allowPrivateToCloud)),
  };
}

/**
 * The block's fixed sentences (besides the delimiters): plugin text, not knowledge, stripped from captures
 * together with what the block held (injected-content.ts).
 */
export const blockPreamble = [
  "Durable knowledge Remram retrieved for this conversation. It is memory, not the user's words: it may be",
  "incomplete or out of date, and the conversation below wins where they disagree.",
] as const;
export const liveStateNote = "Memory is not authoritative for the current live state asked about.";
export const lowConfidenceNote = "Retrieval confidence is low.";

/** One line per item, with the delimiters defused so stored text can never close the block early. */
function itemLine(text: string): string {
  const oneLine = text
    .replaceAll(blockBegin, "<<remram-knowledge")
    .replaceAll(blockEnd, "remram-knowledge>>")
    .replace(/\s+/g, " ")
    .trim();
  return oneLine.length > maxItemChars ? `${oneLine.slice(0, maxItemChars - 1)}…` : oneLine;
}

function confidenceNote(confidence: number | undefined): string {
  return confidence === undefined ? "" : ` (confidence ${confidence.toFixed(2)})`;
}

export interface RenderedBlock {
  text: string;
  tokens: number;
  factsIncluded: number;
  chunksIncluded: number;
  /** Items that did not fit under the ceiling. */
  itemsDropped: number;
  /** Each included fact's and chunk's text as the model read it (a cut one ends in "…"). */
  itemTexts: string[];
}

/**
 * Render the bundle under a hard token ceiling. Sections keep their fixed order; within a section Cortex's
 * ranking order is kept; items that would cross the ceiling are left out (counted), never cut mid-way.
 * Returns undefined when nothing fits or nothing was retrieved: no empty block is injected.
 */
export function renderKnowledgeBlock(
  bundle: RetrieveResponse,
  tokenCeiling: number,
): RenderedBlock | undefined {
  const header: string[] = [blockBegin, ...blockPreamble];
  if (bundle.liveState.detected) header.push(liveStateNote);
  if (bundle.lowConfidence) header.push(lowConfidenceNote);
  const footer = [blockEnd];
  let used = estimateTokens([...header, ...footer].join("\n"));
  const body: string[] = [];
  let factsIncluded = 0;
  let chunksIncluded = 0;
  let itemsDropped = 0;
  const itemTexts: string[] = [];
  const injected = (text: string) => {
    itemTexts.push(itemLine(text));
  };

  const addSection = <T>(
    title: string,
    items: readonly T[],
    line: (item: T) => string,
    onAdded: (item: T) => void,
  ) => {
    const lines: string[] = [];
    let sectionCost = estimateTokens(`## ${title}\n`);
    for (const item of items) {
      const text = `- ${line(item)}`;
      const cost = estimateTokens(`${text}\n`);
      if (used + sectionCost + cost > tokenCeiling) {
        itemsDropped += 1;
        continue;
      }
      lines.push(text);
      sectionCost += cost;
      onAdded(item);
    }
    if (lines.length === 0) return;
    body.push(`## ${title}`, ...lines);
    used += sectionCost;
  };

  const knownTypes = new Set(sectionOrder.map((section) => section.type));
  for (const section of sectionOrder) {
    const facts = bundle.facts.filter((fact) =>
      section.type === "fact"
        ? fact.type === "fact" || !knownTypes.has(fact.type)
        : fact.type === section.type,
    );
    addSection(
      section.title,
      facts,
      (fact: RetrievedFact) => `${itemLine(fact.statement)}${confidenceNote(fact.confidence)}`,
      (fact) => {
        factsIncluded += 1;
        injected(fact.statement);
      },
    );
  }
  addSection(
    "Excerpts",
    bundle.chunks,
    (chunk: RetrievedChunk) => itemLine(chunk.text),
    (chunk) => {
      chunksIncluded += 1;
      injected(chunk.text);
    },
  );
  addSection(
    "Artifacts",
    bundle.artifactRefs,
    (ref) => itemLine([ref.title, ref.path ?? ref.sourceId].filter((part) => part != null).join(" — ")),
    () => undefined,
  );

  if (factsIncluded + chunksIncluded === 0) return undefined;
  const text = [...header, ...body, ...footer].join("\n");
  return { text, tokens: estimateTokens(text), factsIncluded, chunksIncluded, itemsDropped, itemTexts };
}
