/**
 * Erasure's pure rules (a person's "forget me"): how a tombstone names the person, which later writes it refuses,
 * and how the person's words are cut out of Markdown artifacts, free text and archived documents they share.
 */
import { createHash } from "node:crypto";
import type { MemoryDocument } from "@remram/contract";

/** Tombstones name a person by this digest, so the index of erased people holds no identifier in clear. */
export function erasureSubject(userId: string): string {
  return createHash("sha256").update(`remram-erasure\n${userId}`).digest("hex");
}

/**
 * A write observed at or before the person's latest erasure carries data the erasure removed (a queue flushed late,
 * a retry): refused. Anything observed later is the person using the assistant again.
 */
export function refusedByErasure(observedAt: string, erasedAt: string | undefined): boolean {
  return erasedAt !== undefined && Date.parse(observedAt) <= Date.parse(erasedAt);
}

/** What identifies the person's data in copies: their item ids, and the statements an artifact quotes. */
export interface ErasedContent {
  ids: ReadonlySet<string>;
  /** Whitespace-collapsed, at least `minPhraseLength` long (erasedPhrases). */
  phrases: readonly string[];
}

/** Shorter statements are not searched for in free text: "yes" or "Oslo" would hit other people's words. */
export const minPhraseLength = 12;

const collapse = (text: string): string => text.replace(/\s+/g, " ").trim();

export function erasedPhrases(texts: Iterable<string>): string[] {
  const phrases = new Set<string>();
  for (const text of texts) {
    const phrase = collapse(text);
    if (phrase.length >= minPhraseLength) phrases.add(phrase);
  }
  return [...phrases].sort();
}

/** Lines whose whitespace-collapsed text contains an erased phrase go; the rest stay byte for byte. */
export function scrubLines(text: string, phrases: readonly string[]): { text: string; removed: number } {
  if (phrases.length === 0) return { text, removed: 0 };
  const lines = text.split("\n");
  const kept = lines.filter((line) => {
    const flat = collapse(line);
    return flat.length < minPhraseLength || !phrases.some((phrase) => flat.includes(phrase));
  });
  return { text: kept.join("\n"), removed: lines.length - kept.length };
}

export type ContentScrub =
  | { outcome: "unchanged" }
  | { outcome: "rewritten"; content: string }
  | { outcome: "deleted" };

const sourceLine = /^ {2}- id: (".*")$/;
const sourceConfidence = /^ {4}confidence: ([0-9.]+)$/;

function parseId(quoted: string): string | undefined {
  try {
    const id: unknown = JSON.parse(quoted);
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A Markdown artifact without the person's entries. Cortex renders one front-matter source (id, confidence) per
 * bullet, in the same order (core/proposal.ts renderArtifact), so an entry is found by its id even when its object
 * is long gone; a file whose every entry goes is deleted. Any other text file loses the lines quoting an erased
 * statement. Binary content is left alone.
 */
export function scrubArtifact(content: string, erased: ErasedContent): ContentScrub {
  if (content.includes("\u0000")) return { outcome: "unchanged" };
  const lines = content.split("\n");
  const close = lines.indexOf("---", 1);
  const generated =
    lines[0] === "---" && close > 0 && lines.slice(1, close).includes("generator: remram-cortex");
  let text = content;
  if (generated) {
    const sources: { at: number; id: string | undefined; confidence: number }[] = [];
    for (let i = 1; i < close; i += 1) {
      const id = sourceLine.exec(lines[i] ?? "")?.[1];
      if (id === undefined) continue;
      const confidence = sourceConfidence.exec(lines[i + 1] ?? "")?.[1];
      sources.push({ at: i, id: parseId(id), confidence: Number(confidence ?? Number.NaN) });
    }
    const bullets = lines.flatMap((line, at) => (at > close && line.startsWith("- ") ? [at] : []));
    const dropped = sources.flatMap((source, position) =>
      source.id !== undefined && erased.ids.has(source.id) ? [position] : [],
    );
    if (dropped.length > 0) {
      const remove = new Set<number>();
      for (const position of dropped) {
        const source = sources[position] as (typeof sources)[number];
        remove.add(source.at);
        if (Number.isFinite(source.confidence)) remove.add(source.at + 1);
        // Bullets pair with sources by position only in a file nobody edited by hand.
        if (bullets.length === sources.length) remove.add(bullets[position] as number);
      }
      if (dropped.length === sources.length) return { outcome: "deleted" };
      const kept = sources.filter((_, position) => !dropped.includes(position));
      const known = kept.filter((s) => Number.isFinite(s.confidence));
      const mean = known.reduce((sum, s) => sum + s.confidence, 0) / Math.max(1, known.length);
      text = lines
        .flatMap((line, at) => {
          if (remove.has(at)) return [];
          // The file's mean confidence counted the erased entries too.
          if (at < close && /^confidence: /.test(line) && known.length > 0)
            return [`confidence: ${mean.toFixed(2)}`];
          return [line];
        })
        .join("\n");
    }
  }
  text = scrubLines(text, erased.phrases).text;
  return text === content ? { outcome: "unchanged" } : { outcome: "rewritten", content: text };
}

export type DocumentScrub =
  | { outcome: "unchanged" }
  | { outcome: "deleted"; removedMessages: number }
  | { outcome: "rewritten"; document: MemoryDocument; removedMessages: number };

/**
 * An archived document without the person. Owned by them alone, it goes whole. Shared, it loses their turns: a user
 * turn whose `authorId` names them, or names nobody when they are an owner (it cannot be told apart from theirs, so
 * erasure errs on the side of the person), together with the turns answering it up to the next user turn, and any
 * later turn quoting a removed one verbatim. They leave the owners. When no other person's turn remains, nothing of
 * the conversation is left to keep and the document goes too.
 */
export function withoutPerson(document: MemoryDocument, userId: string): DocumentScrub {
  const owners = document.consentScope.ownerIds;
  const owner = owners.includes(userId);
  const authored = document.messages.some((m) => m.authorId === userId);
  if (!owner && !authored) return { outcome: "unchanged" };
  if (owner && owners.length === 1) return { outcome: "deleted", removedMessages: document.messages.length };
  const isTheirs = (m: MemoryDocument["messages"][number]) =>
    m.authorId === userId || (m.authorId === undefined && owner);
  let removing = false;
  const removedTurns: string[] = [];
  const firstPass = document.messages.filter((message) => {
    if (message.role === "user") {
      removing = isTheirs(message);
      if (removing) removedTurns.push(collapse(message.content));
    }
    return !removing;
  });
  const quoted = removedTurns.filter((turn) => turn.length >= minPhraseLength);
  const messages = firstPass.filter((m) => !quoted.some((turn) => collapse(m.content).includes(turn)));
  const removedMessages = document.messages.length - messages.length;
  const remainingOwners = owners.filter((id) => id !== userId);
  if (remainingOwners.length === 0 || (removedMessages > 0 && !messages.some((m) => m.role === "user"))) {
    return { outcome: "deleted", removedMessages: document.messages.length };
  }
  return {
    outcome: "rewritten",
    removedMessages,
    document: {
      ...document,
      messages,
      consentScope: { ...document.consentScope, ownerIds: remainingOwners },
    },
  };
}

/**
 * The summary of a rewritten document: the summariser's text was written from the removed turns too and may
 * paraphrase them, which no string match can find, so it is replaced by the lead of what remains.
 */
export function extractiveSummary(document: MemoryDocument, words = 60): string {
  const text = document.messages
    .filter((m) => m.role === "user" || m.role === "assistant")
    .map((m) => collapse(m.content))
    .join(" ");
  const lead = text.split(" ").filter(Boolean).slice(0, words).join(" ").slice(0, 4000);
  return lead === "" ? "(archived conversation)" : lead;
}
