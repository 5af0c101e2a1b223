/**
 * Step 4 of RAM: assemble the bundle under a hard token budget. Near-duplicates are dropped, breadth comes
 * before depth (one item per subject or source first), the chunk hierarchy is respected (a section and its own
 * passages are never both included; L0 summaries only as background), selected chunks may pull in their direct
 * neighbours, and the contract's renderer (renderBundle: one delimiter, fixed framing, sections in a fixed order)
 * turns the selection into the block the hooks inject as is. Pure: the token counter is passed in, and equal
 * inputs give a byte-identical bundle whose exact token count, framing included, is within the budget.
 */
import type {
  BundleItem,
  BundleSectionName,
  ChunkLevel,
  KnowledgeType,
  PrivacyLevel,
  Scope,
} from "@remram/contract";
import {
  bundleClose,
  bundleHeader,
  bundleSectionNames,
  documentHashOf,
  renderBundle,
  renderBundleItem,
  renderBundleSectionHeading,
} from "@remram/contract";
import type { RankableDoc, RankedCandidate } from "./ranking.js";

/** Scope and privacy travel with every item so callers can keep private items away from cloud models. */
export interface GovernedDoc extends RankableDoc {
  scope: Scope;
  privacy: PrivacyLevel;
}

export interface FactDoc extends GovernedDoc {
  statement: string;
  type: KnowledgeType;
  claimSubject: string | null;
  dimensions: Record<string, string[]>;
}

export interface ChunkDoc extends GovernedDoc {
  level: ChunkLevel;
  sourceId: string;
  sourceKind: string;
  title: string | null;
  path: string | null;
  text: string;
  parentId: string | null;
  prevId: string | null;
  nextId: string | null;
}

export type RetrievalMode = "standard" | "deep";

export interface ModeLimits {
  maxFacts: number;
  maxChunks: number;
  /** How many of the best chunks may pull in their direct neighbours. */
  expandTop: number;
  maxBackground: number;
}

export const modeLimits: Record<RetrievalMode, ModeLimits> = {
  standard: { maxFacts: 12, maxChunks: 4, expandTop: 2, maxBackground: 2 },
  deep: { maxFacts: 24, maxChunks: 10, expandTop: 4, maxBackground: 4 },
};

/** Jaccard similarity of word shingles at or above this drops the lower-ranked item. */
export const nearDuplicateThreshold = 0.8;

export type ExclusionReason = "near_duplicate" | "token_budget" | "rank_cutoff";

export interface AssemblyInput {
  facts: readonly RankedCandidate<FactDoc>[];
  chunks: readonly RankedCandidate<ChunkDoc>[];
  /** Neighbour chunks fetched through the same policy gate, by id. */
  neighbours: ReadonlyMap<string, ChunkDoc>;
  tokenBudget: number;
  mode: RetrievalMode;
  /** A question about current live state: items are rendered as dated history under a live-check instruction. */
  liveState: boolean;
  countTokens: (text: string) => number;
  lowConfidenceThreshold: number;
}

export interface SelectedFact {
  doc: FactDoc;
  score: number;
}

export interface SelectedChunk {
  doc: ChunkDoc;
  score: number;
  expandedFrom: string | null;
}

export interface AssembledBundle {
  text: string;
  tokens: number;
  sections: { name: BundleSectionName; itemIds: string[]; tokens: number }[];
  facts: SelectedFact[];
  chunks: SelectedChunk[];
  artifactRefs: { sourceId: string; path: string | null; title: string | null }[];
  aggregateConfidence: number;
  lowConfidence: boolean;
  /** Why each ranked candidate was left out (absent = selected). */
  exclusions: Map<string, ExclusionReason>;
}

const sectionOfType: Record<KnowledgeType, BundleSectionName> = {
  constraint: "constraints",
  preference: "preferences",
  decision: "decisions",
  principle: "principles",
  fact: "facts",
};

/** Lower-cased word unigrams and bigrams. */
export function shingles(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const set = new Set<string>(words);
  for (let index = 0; index + 1 < words.length; index += 1) set.add(`${words[index]} ${words[index + 1]}`);
  return set;
}

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const item of a) if (b.has(item)) shared += 1;
  return shared / (a.size + b.size - shared);
}

/** Breadth before depth: the best item of every group first, then the rest, each pass in rank order. */
/** The longest text counted in one piece: BPE over one long run of letters costs time quadratic in its length. */
export const tokenCountSlice = 1_000;

/**
 * A token counter whose cost is linear in the text: text is counted in slices of at most `tokenCountSlice`
 * characters, cut at whitespace where there is some (so prose counts exactly as a whole), else mid-word (a 64 KB
 * "word" stored by anyone would otherwise take seconds to count on every retrieval that finds it; the slices
 * count it a little high, which keeps the budget a ceiling).
 */
export function slicedTokenCount(count: (text: string) => number): (text: string) => number {
  return (text) => {
    let total = 0;
    let start = 0;
    while (text.length - start > tokenCountSlice) {
      let end = start + tokenCountSlice;
      const space = text.lastIndexOf(" ", end);
      if (space > start) end = space;
      // Never between the halves of a surrogate pair.
      else if (/[\uDC00-\uDFFF]/.test(text.charAt(end))) end -= 1;
      total += count(text.slice(start, end));
      start = end;
    }
    return total + count(text.slice(start));
  };
}

export function breadthFirst<T>(items: readonly T[], groupOf: (item: T) => string): T[] {
  const seen = new Set<string>();
  const first: T[] = [];
  const rest: T[] = [];
  for (const item of items) {
    const group = groupOf(item);
    if (seen.has(group)) rest.push(item);
    else {
      seen.add(group);
      first.push(item);
    }
  }
  return [...first, ...rest];
}

/** Ids of the direct neighbours of the chunks that may be expanded (before assembly, so they can be fetched). */
export function expansionCandidates(
  chunks: readonly RankedCandidate<ChunkDoc>[],
  mode: RetrievalMode,
): string[] {
  const ids = new Set<string>();
  const grounding = chunks.filter((chunk) => chunk.doc.level !== "L0").slice(0, modeLimits[mode].expandTop);
  for (const chunk of grounding) {
    if (chunk.doc.prevId !== null) ids.add(chunk.doc.prevId);
    if (chunk.doc.nextId !== null) ids.add(chunk.doc.nextId);
  }
  for (const chunk of chunks) ids.delete(chunk.doc.id);
  return [...ids].sort();
}

function factItem(doc: FactDoc): BundleItem {
  return {
    kind: "fact",
    section: sectionOfType[doc.type],
    statement: doc.statement,
    confidence: doc.confidence,
    learnedAt: doc.observedAt,
  };
}

function chunkItem(doc: ChunkDoc): BundleItem {
  return {
    kind: "chunk",
    section: doc.level === "L0" ? "background" : "context",
    text: doc.text,
    source: doc.title ?? doc.path,
    archiveHash: documentHashOf(doc),
    learnedAt: doc.observedAt,
  };
}

interface Entry {
  id: string;
  item: BundleItem;
  tokens: number;
}

export function assembleBundle(input: AssemblyInput): AssembledBundle {
  const limits = modeLimits[input.mode];
  const exclusions = new Map<string, ExclusionReason>();
  const count = input.countTokens;
  // The framing's cost, with the low-confidence note whether or not it will be said (that is known only once
  // the selection is); every line ends with "\n" in the estimate. The exact count of the final text is checked
  // at the end.
  const header = bundleHeader({ liveState: input.liveState, lowConfidence: true });
  const fixedTokens = count(`${header.join("\n")}\n${bundleClose}`) + header.length + 1;
  const sectionHeaderTokens = new Map(
    bundleSectionNames.map((name) => [name, count(renderBundleSectionHeading(name)) + 1]),
  );
  const entries: Entry[] = [];
  const openSections = new Set<BundleSectionName>();
  let used = fixedTokens;
  const kept: Set<string>[] = [];
  const selectedChunkIds = new Set<string>();
  const selectedFacts: SelectedFact[] = [];
  const selectedChunks: SelectedChunk[] = [];

  const isNearDuplicate = (text: string): boolean => {
    const own = shingles(text);
    if (kept.some((other) => jaccard(own, other) >= nearDuplicateThreshold)) return true;
    kept.push(own);
    return false;
  };
  /** Add a line if the bundle still fits; a line that does not fit is skipped, smaller later ones may fit. */
  const tryAdd = (id: string, item: BundleItem): boolean => {
    const tokens = count(renderBundleItem(item, input.liveState)) + 1;
    const headerCost = openSections.has(item.section) ? 0 : (sectionHeaderTokens.get(item.section) ?? 0);
    if (used + tokens + headerCost > input.tokenBudget) return false;
    used += tokens + headerCost;
    openSections.add(item.section);
    entries.push({ id, item, tokens });
    return true;
  };

  // Facts: breadth by claim subject (or first dimension tag), near-duplicates out, budget in.
  const facts = breadthFirst(
    input.facts,
    (fact) => fact.doc.claimSubject ?? fact.doc.dimensionTags[0] ?? fact.doc.id,
  );
  for (const fact of facts) {
    if (selectedFacts.length >= limits.maxFacts) {
      exclusions.set(fact.doc.id, "rank_cutoff");
    } else if (isNearDuplicate(fact.doc.statement)) {
      exclusions.set(fact.doc.id, "near_duplicate");
    } else if (tryAdd(fact.doc.id, factItem(fact.doc))) {
      selectedFacts.push({ doc: fact.doc, score: fact.score });
    } else {
      exclusions.set(fact.doc.id, "token_budget");
    }
  }

  // Grounding chunks (L1/L2): breadth by source; a chunk whose parent or child is already in is redundant depth.
  const grounding = breadthFirst(
    input.chunks.filter((chunk) => chunk.doc.level !== "L0"),
    (chunk) => chunk.doc.sourceId,
  );
  const addChunk = (doc: ChunkDoc, score: number, expandedFrom: string | null): ExclusionReason | null => {
    const redundant =
      (doc.parentId !== null && selectedChunkIds.has(doc.parentId)) ||
      selectedChunks.some((chunk) => chunk.doc.parentId === doc.id);
    if (redundant || isNearDuplicate(doc.text)) return "near_duplicate";
    if (!tryAdd(doc.id, chunkItem(doc))) return "token_budget";
    selectedChunkIds.add(doc.id);
    selectedChunks.push({ doc, score, expandedFrom });
    return null;
  };
  let groundingCount = 0;
  for (const chunk of grounding) {
    if (groundingCount >= limits.maxChunks) {
      exclusions.set(chunk.doc.id, "rank_cutoff");
      continue;
    }
    const reason = addChunk(chunk.doc, chunk.score, null);
    if (reason === null) groundingCount += 1;
    else exclusions.set(chunk.doc.id, reason);
  }

  // Bounded adjacency: direct neighbours of the best selected grounding chunks, if they fit.
  const expandable = selectedChunks.filter((chunk) => chunk.expandedFrom === null).slice(0, limits.expandTop);
  for (const chunk of expandable) {
    for (const neighbourId of [chunk.doc.prevId, chunk.doc.nextId]) {
      if (neighbourId === null || selectedChunkIds.has(neighbourId)) continue;
      const neighbour = input.neighbours.get(neighbourId);
      if (neighbour !== undefined) addChunk(neighbour, 0, chunk.doc.id);
    }
  }

  // Background: L0 summaries of sources not already grounded (deep mode takes them regardless).
  const groundedSources = new Set(selectedChunks.map((chunk) => chunk.doc.sourceId));
  let backgroundCount = 0;
  for (const chunk of input.chunks.filter((candidate) => candidate.doc.level === "L0")) {
    if (
      backgroundCount >= limits.maxBackground ||
      (input.mode === "standard" && groundedSources.has(chunk.doc.sourceId))
    ) {
      exclusions.set(chunk.doc.id, "rank_cutoff");
      continue;
    }
    const reason = addChunk(chunk.doc, chunk.score, null);
    if (reason === null) backgroundCount += 1;
    else exclusions.set(chunk.doc.id, reason);
  }

  // Render with the contract's renderer; if the exact count disagrees with the estimate, drop from the end.
  // Low confidence depends on what stays, so it is worked out again after every drop.
  const finish = () => {
    const ids = new Set(entries.map((entry) => entry.id));
    const facts = selectedFacts.filter((fact) => ids.has(fact.doc.id));
    const chunks = selectedChunks.filter((chunk) => ids.has(chunk.doc.id));
    const aggregateConfidence = weightedConfidence([
      ...facts.map((fact) => ({ score: fact.score, confidence: fact.doc.confidence })),
      ...chunks
        .filter((chunk) => chunk.expandedFrom === null)
        .map((chunk) => ({ score: chunk.score, confidence: chunk.doc.confidence })),
    ]);
    const lowConfidence = entries.length === 0 || aggregateConfidence < input.lowConfidenceThreshold;
    const text = renderBundle({
      items: entries.map((entry) => entry.item),
      liveState: input.liveState,
      lowConfidence,
    });
    return { facts, chunks, aggregateConfidence, lowConfidence, text };
  };
  let final = finish();
  while (entries.length > 0 && count(final.text) > input.tokenBudget) {
    const dropped = entries.pop() as Entry;
    exclusions.set(dropped.id, "token_budget");
    final = finish();
  }
  // A live-state question with no item is still told to check live state, if the framing alone fits.
  const text = count(final.text) <= input.tokenBudget ? final.text : "";
  const tokens = text === "" ? 0 : count(text);

  const sections = bundleSectionNames
    .map((name) => {
      const own = entries.filter((entry) => entry.item.section === name);
      return {
        name,
        itemIds: own.map((entry) => entry.id),
        tokens: own.reduce((sum, entry) => sum + entry.tokens, 0),
      };
    })
    .filter((section) => section.itemIds.length > 0);

  const artifactRefs = [
    ...new Map(
      final.chunks
        .filter((chunk) => chunk.doc.sourceKind === "artifact")
        .map((chunk) => [
          chunk.doc.sourceId,
          { sourceId: chunk.doc.sourceId, path: chunk.doc.path, title: chunk.doc.title },
        ]),
    ).values(),
  ].sort((a, b) => (a.sourceId < b.sourceId ? -1 : a.sourceId > b.sourceId ? 1 : 0));

  return {
    text,
    tokens,
    sections,
    facts: final.facts,
    chunks: final.chunks,
    artifactRefs,
    aggregateConfidence: final.aggregateConfidence,
    lowConfidence: final.lowConfidence,
    exclusions,
  };
}

/** Score-weighted mean confidence of what was selected; 0 when nothing was. */
export function weightedConfidence(items: readonly { score: number; confidence: number }[]): number {
  const totalScore = items.reduce((sum, item) => sum + item.score, 0);
  if (items.length === 0) return 0;
  if (totalScore <= 0) return items.reduce((sum, item) => sum + item.confidence, 0) / items.length;
  return items.reduce((sum, item) => sum + item.score * item.confidence, 0) / totalScore;
}
