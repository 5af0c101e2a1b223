/**
 * Turns validated ingest events into the knowledge objects and chunks to store: redaction, provenance keys,
 * deterministic ids and the L0/L1/L2 chunk hierarchy. Pure: `now` and the policy defaults come in as data.
 */
import { createHash } from "node:crypto";
import type {
  Chunk,
  ChunkLevel,
  Consent,
  IngestEvent,
  KnowledgeObject,
  PrivacyLevel,
  Provenance,
  ProvenanceSource,
} from "@remram/contract";
import { contactHandlingFor, privacyWithContacts } from "./contacts.js";
import {
  opaqueIdentifier,
  type RedactionResult,
  redact,
  redactDimensions,
  redactIdentifier,
  withinBound,
} from "./redaction.js";

export interface IngestDefaults {
  privacy: PrivacyLevel;
  now: string;
}

export interface PlannedItem {
  index: number;
  kind: IngestEvent["kind"];
  provenanceKey: string;
  knowledge: KnowledgeObject | null;
  chunks: Chunk[];
  redactions: number;
}

/** Words per L2 passage and per L1 section; small enough for a bundle, large enough to carry meaning. */
export const passageWords = 120;
export const sectionWords = 360;
const leadWords = 60;

const chunkConfidence: Record<Chunk["sourceKind"], number> = {
  artifact: 0.9,
  tool_result: 0.7,
  transcript: 0.6,
  turn: 0.5,
};

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Case, spacing and trailing punctuation do not make a different statement. */
export function normalizeStatement(statement: string): string {
  return statement
    .toLowerCase()
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[.!;]+$/, "");
}

export function knowledgeIdFor(provenanceKey: string): string {
  return `ko_${sha256(provenanceKey).slice(0, 32)}`;
}

export function chunkIdFor(provenanceKey: string, level: ChunkLevel, seq: number): string {
  return `ch_${sha256(provenanceKey).slice(0, 24)}_${level.toLowerCase()}_${seq}`;
}

/**
 * The idempotency key of an event: the caller's, or one derived from what makes the event itself (not when it
 * arrived), so a retried delivery maps to the same key.
 */
export function provenanceKeyFor(
  event: IngestEvent,
  redactedContent: string,
  onRedacted: (result: RedactionResult) => void = () => {},
): string {
  if (event.provenanceKey !== undefined) return identifier(event.provenanceKey, keyChars, onRedacted);
  const owner = `${event.scope}/${event.owner.userId ?? "-"}/${event.owner.householdId ?? "-"}`;
  switch (event.kind) {
    case "knowledge":
      return `knowledge:${owner}:${event.type}:${sha256(normalizeStatement(redactedContent))}`;
    case "tool_result":
      return `tool_result:${event.sessionId ?? "-"}:${event.tool}:${event.toolCallId ?? sha256(redactedContent)}`;
    case "turn":
      return `turn:${event.sessionId ?? "-"}:${event.turnId}`;
    case "document":
      return `document:${event.sourceKind}:${identifier(event.sourceId, sourceIdChars)}:${sha256(redactedContent)}`;
  }
}

/** The bounds of identifiers (contract/src/ingest.ts), which redaction must not push a value past. */
const keyChars = 512;
const sourceIdChars = 256;
const pathChars = 1024;
const channelChars = 128;

/**
 * A caller's identifier as stored: credentials redacted, contact details kept (core/redaction.ts
 * `redactIdentifier`), so it still names its source and a retried delivery still maps to the same key.
 */
function identifier(
  text: string,
  max: number,
  onRedacted: (result: RedactionResult) => void = () => {},
): string {
  const result = redactIdentifier(text, max);
  onRedacted(result);
  return result.text;
}

/**
 * What an item's id is derived from: its idempotency key within its scope and owner, so two owners' identical
 * items (or a key two callers happen to choose alike) are two items, never one dropped as the other's duplicate.
 * A derived knowledge key already names its owner and stays as it is, so the ids stored before this rule hold.
 */
export function identityKeyFor(event: IngestEvent, provenanceKey: string): string {
  if (event.kind === "knowledge" && event.provenanceKey === undefined) return provenanceKey;
  return `${event.scope}/${event.owner.userId ?? "-"}/${event.owner.householdId ?? "-"}|${provenanceKey}`;
}

/**
 * Character bounds of chunks, so text without spaces (a 64 KB "word") still becomes chunks the contract accepts
 * (≤ 16,000 characters) and retrieval never handles one huge passage: a longer word is cut into pieces, a passage
 * or section closes early when the next word would pass its bound. Prose never comes near them.
 */
export const maxWordChars = 1_000;
export const passageChars = 8_000;
export const sectionChars = 16_000;

/** `word` in pieces of at most `maxWordChars`, never between the halves of a surrogate pair. */
function wordPieces(word: string): string[] {
  if (word.length <= maxWordChars) return [word];
  const pieces: string[] = [];
  let start = 0;
  while (start < word.length) {
    let end = Math.min(word.length, start + maxWordChars);
    if (end < word.length && /[\uDC00-\uDFFF]/.test(word.charAt(end))) end -= 1;
    pieces.push(word.slice(start, end));
    start = end;
  }
  return pieces;
}

/** Split text into runs of at most `size` words and `maxChars` characters, keeping paragraph text in order. */
export function splitWords(text: string, size: number, maxChars = passageChars): string[] {
  const words = text
    .split(/\s+/)
    .filter((word) => word !== "")
    .flatMap(wordPieces);
  const parts: string[] = [];
  let current: string[] = [];
  let chars = 0;
  for (const word of words) {
    if (current.length > 0 && (current.length >= size || chars + 1 + word.length > maxChars)) {
      parts.push(current.join(" "));
      current = [];
      chars = 0;
    }
    chars += (current.length > 0 ? 1 : 0) + word.length;
    current.push(word);
  }
  if (current.length > 0) parts.push(current.join(" "));
  return parts;
}

/**
 * Sections: paragraphs (blank-line separated) packed greedily up to `size` words and `sectionChars` characters;
 * long paragraphs are split.
 */
export function splitSections(text: string, size: number): string[] {
  const paragraphs = text
    .split(/\n\s*\n/)
    .flatMap((paragraph) => splitWords(paragraph, size, sectionChars))
    .filter((paragraph) => paragraph !== "");
  const sections: string[] = [];
  let current: string[] = [];
  let count = 0;
  let chars = 0;
  for (const paragraph of paragraphs) {
    const words = paragraph.split(" ").length;
    if (count > 0 && (count + words > size || chars + 2 + paragraph.length > sectionChars)) {
      sections.push(current.join("\n\n"));
      current = [];
      count = 0;
      chars = 0;
    }
    chars += (current.length > 0 ? 2 : 0) + paragraph.length;
    current.push(paragraph);
    count += words;
  }
  if (current.length > 0) sections.push(current.join("\n\n"));
  return sections;
}

export function planIngest(events: readonly IngestEvent[], defaults: IngestDefaults): PlannedItem[] {
  return events.map((event, index) => planEvent(withOpaqueIds(event), index, defaults));
}

/** The event with every referring id that holds a secret replaced by its hash (redaction.ts opaqueIdentifier). */
function withOpaqueIds(event: IngestEvent): IngestEvent {
  const ids = {
    ...(event.sessionId !== undefined && { sessionId: opaqueIdentifier(event.sessionId) }),
    ...(event.agentId !== undefined && { agentId: opaqueIdentifier(event.agentId) }),
    ...(event.turnIds !== undefined && { turnIds: event.turnIds.map(opaqueIdentifier) }),
  };
  switch (event.kind) {
    case "tool_result":
      return {
        ...event,
        ...ids,
        tool: opaqueIdentifier(event.tool),
        ...(event.toolCallId !== undefined && { toolCallId: opaqueIdentifier(event.toolCallId) }),
      };
    case "turn":
      return { ...event, ...ids, turnId: opaqueIdentifier(event.turnId) };
    default:
      return { ...event, ...ids };
  }
}

function planEvent(event: IngestEvent, index: number, defaults: IngestDefaults): PlannedItem {
  let redactions = 0;
  let contactsKept = 0;
  const contacts = contactHandlingFor(event.scope);
  const counted = (result: RedactionResult): string => {
    redactions += result.total;
    contactsKept += result.contactsKept;
    return result.text;
  };
  const clean = (text: string): string => counted(redact(text, { contacts }));
  // Free text, not an identifier and not the item's knowledge: contact details are replaced whatever the scope.
  const channel =
    event.channel === undefined ? undefined : withinBound(counted(redact(event.channel)), channelChars);
  const consent: Consent = event.consent ?? { retrieval: true, agents: ["*"] };
  const observedAt = event.observedAt ?? defaults.now;
  const common = {
    scope: event.scope,
    owner: event.owner,
    privacy: event.privacy ?? defaults.privacy,
    consent,
    dimensions: normalizeDimensions(redactDimensions(event.dimensions ?? {}, counted)),
  };
  // Contact details kept in a user's own item make it private to them (contacts.ts); read after the texts are
  // cleaned, which is why the objects below take `common` through this getter.
  const governed = () =>
    contactsKept > 0 ? { ...common, privacy: privacyWithContacts(common.privacy) } : common;
  const provenanceOf = (key: string, source: ProvenanceSource, tool?: string): Provenance => ({
    key,
    source,
    ...(event.sessionId !== undefined && { sessionId: event.sessionId }),
    ...(event.agentId !== undefined && { agentId: event.agentId }),
    ...(channel !== undefined && { channel }),
    ...(tool !== undefined && { tool }),
    sourceTurnIds: event.turnIds ?? [],
    observedAt,
    ingestedAt: defaults.now,
  });

  if (event.kind === "knowledge") {
    const statement = clean(event.statement);
    const key = provenanceKeyFor(event, statement, counted);
    const idKey = identityKeyFor(event, key);
    const knowledge: KnowledgeObject = {
      id: knowledgeIdFor(idKey),
      statement,
      type: event.type,
      ...(event.claim !== undefined && {
        claim: {
          subject: clean(event.claim.subject),
          predicate: clean(event.claim.predicate),
          object: clean(event.claim.object),
        },
      }),
      provenance: provenanceOf(key, event.source),
      ...governed(),
      confidence: event.confidence,
      reinforcementCount: 1,
      toolConfirmations: 0,
      sessionIds: event.sessionId === undefined ? [] : [event.sessionId],
      lastReinforcedAt: observedAt,
      lastDecayedAt: null,
      userDirective: false,
      usageCount: 0,
      lastUsedAt: null,
      validity: { validFrom: event.validFrom ?? observedAt, invalidAt: null },
      links: event.links ?? [],
      promotionState: "none",
      status: "active",
      createdAt: defaults.now,
      updatedAt: defaults.now,
    };
    return { index, kind: event.kind, provenanceKey: key, knowledge, chunks: [], redactions };
  }

  const chunkBase = (key: string, source: ProvenanceSource, tool?: string) => ({
    provenance: provenanceOf(key, source, tool),
    ...governed(),
    usageCount: 0,
    lastUsedAt: null,
    validity: { validFrom: observedAt, invalidAt: null },
    createdAt: defaults.now,
  });

  if (event.kind === "tool_result" || event.kind === "turn") {
    const text = clean(event.kind === "turn" ? event.text : event.output);
    const key = provenanceKeyFor(event, text, counted);
    const idKey = identityKeyFor(event, key);
    const sourceId = event.kind === "turn" ? `turn:${event.sessionId ?? "-"}:${event.turnId}` : key;
    const base = chunkBase(
      key,
      event.kind === "turn" ? "transcript" : "tool",
      event.kind === "tool_result" ? event.tool : undefined,
    );
    const title = event.kind === "tool_result" ? `${event.tool} output` : `${event.role} turn`;
    const passages = splitWords(text, passageWords);
    const chunks = passages.map(
      (passage, seq): Chunk => ({
        id: chunkIdFor(idKey, "L2", seq),
        sourceId,
        sourceKind: event.kind,
        title,
        level: "L2",
        seq,
        text: passage,
        parentId: null,
        prevId: seq > 0 ? chunkIdFor(idKey, "L2", seq - 1) : null,
        nextId: seq < passages.length - 1 ? chunkIdFor(idKey, "L2", seq + 1) : null,
        confidence: chunkConfidence[event.kind],
        ...base,
      }),
    );
    return { index, kind: event.kind, provenanceKey: key, knowledge: null, chunks, redactions };
  }

  const text = clean(event.text);
  const key = provenanceKeyFor(event, text, counted);
  const idKey = identityKeyFor(event, key);
  const title = event.title === undefined ? undefined : clean(event.title);
  const summary =
    event.summary === undefined ? (splitWords(text, leadWords)[0] ?? text) : clean(event.summary);
  const base = chunkBase(key, event.sourceKind === "artifact" ? "artifact" : "transcript");
  const identity = {
    sourceId: identifier(event.sourceId, sourceIdChars, counted),
    sourceKind: event.sourceKind,
    ...(title !== undefined && { title }),
    ...(event.path !== undefined && { path: identifier(event.path, pathChars, counted) }),
    confidence: chunkConfidence[event.sourceKind],
  };
  const l0Id = chunkIdFor(idKey, "L0", 0);
  const chunks: Chunk[] = [
    {
      id: l0Id,
      ...identity,
      level: "L0",
      seq: 0,
      text: summary,
      parentId: null,
      prevId: null,
      nextId: null,
      ...base,
    },
  ];
  const sections = splitSections(text, sectionWords);
  const passages = sections.flatMap((section, sectionSeq) =>
    splitWords(section, passageWords).map((passage) => ({ passage, sectionSeq })),
  );
  sections.forEach((section, seq) => {
    chunks.push({
      id: chunkIdFor(idKey, "L1", seq),
      ...identity,
      level: "L1",
      seq,
      text: section,
      parentId: l0Id,
      prevId: seq > 0 ? chunkIdFor(idKey, "L1", seq - 1) : null,
      nextId: seq < sections.length - 1 ? chunkIdFor(idKey, "L1", seq + 1) : null,
      ...base,
    });
  });
  passages.forEach(({ passage, sectionSeq }, seq) => {
    chunks.push({
      id: chunkIdFor(idKey, "L2", seq),
      ...identity,
      level: "L2",
      seq,
      text: passage,
      parentId: chunkIdFor(idKey, "L1", sectionSeq),
      prevId: seq > 0 ? chunkIdFor(idKey, "L2", seq - 1) : null,
      nextId: seq < passages.length - 1 ? chunkIdFor(idKey, "L2", seq + 1) : null,
      ...base,
    });
  });
  return { index, kind: event.kind, provenanceKey: key, knowledge: null, chunks, redactions };
}

/** Dimension values are trimmed, de-duplicated and sorted so equal inputs index identically. */
export function normalizeDimensions(dimensions: Record<string, string[]>): Record<string, string[]> {
  const entries = Object.entries(dimensions)
    .map(
      ([name, values]) =>
        [name, [...new Set(values.map((value) => value.trim()).filter((v) => v !== ""))].sort()] as const,
    )
    .filter(([, values]) => values.length > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries);
}

/** Keyword tags for filtering and overlap: "name:value", lower-cased. */
export function dimensionTags(dimensions: Record<string, string[]>): string[] {
  return Object.entries(dimensions)
    .flatMap(([name, values]) => values.map((value) => `${name}:${value.toLowerCase()}`))
    .sort();
}
