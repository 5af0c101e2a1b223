import { z } from "zod";
import type { KnowledgeType } from "../core/knowledge.js";
import { areOpposites } from "../core/polarity.js";
import { redact } from "../core/redaction.js";

/**
 * How dream asks the reflection model to word a principle, and which replies it accepts. The rules decided that
 * the pattern is a principle; the model only phrases it, and a reply that is not a grounded sentence about the
 * evidence is refused (the principle waits for the next cycle rather than being stored with bad text).
 */

/** What the model is shown: the pattern's members, strongest first. */
export interface PrincipleDraft {
  id: string;
  types: readonly KnowledgeType[];
  /** Member statements, strongest first, each once. */
  statements: readonly string[];
}

export const maxWordingChars = 240;
/** At most this many evidence statements go into one prompt (the strongest); enough to see the pattern. */
export const maxPromptStatements = 12;
const maxPromptStatementChars = 300;

/** The reply: one field, so a small model has little room to go wrong; Ollama's `format` is its JSON Schema. */
export const wordingReply = z.object({ statement: z.string().min(12).max(maxWordingChars) }).strict();
export const wordingReplySchema = z.toJSONSchema(wordingReply);

export function wordingPrompt(draft: PrincipleDraft): { role: "system" | "user"; content: string }[] {
  const notes = draft.statements
    .slice(0, maxPromptStatements)
    .map((s) => `- ${s.length > maxPromptStatementChars ? `${s.slice(0, maxPromptStatementChars)}…` : s}`);
  return [
    {
      role: "system",
      content:
        "You state the general rule that a person's recurring notes support, as one short plain sentence in their " +
        `own terms. Keep names, places and numbers as the notes give them; add nothing they do not say. Reply as JSON {"statement": "..."}.`,
    },
    { role: "user", content: `${draft.types.join(", ")} notes:\n${notes.join("\n")}` },
  ];
}

export type WordingCheck = { ok: true; statement: string } | { ok: false; reason: string };

/**
 * Words that carry no content; a wording is judged by the rest. Kept short and English, like the notes the
 * reflection model writes.
 */
const stopWords = new Set(
  (
    "a an the and or but of to in on at by for from with as is are was were be been being do does did has have had " +
    "it its this that these those there their they them he she his her we our you your i my me not no never " +
    "always all any each every some more most should must can could would will shall may might so than then " +
    "into onto about over under up down out only also just very"
  ).split(" "),
);

export function isStopWord(word: string): boolean {
  return stopWords.has(word.toLowerCase());
}

/** Lower-cased words with common endings cut, so "deploys", "deployments" and "deploy" compare equal. */
export function contentWords(text: string): Set<string> {
  const words = new Set<string>();
  for (const token of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (token.length === 0 || stopWords.has(token)) continue;
    words.add(stemWord(token));
  }
  return words;
}

const suffixes = ["ations", "ation", "ments", "ment", "ings", "ing", "ies", "ied", "ed", "es", "s"];

function stemWord(word: string): string {
  for (const suffix of suffixes) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) {
      const stem = word.slice(0, -suffix.length);
      return suffix === "ies" || suffix === "ied" ? `${stem}y` : stem;
    }
  }
  return word;
}

/** Share of a wording's content words that must come from the evidence: a summary, not an invention. */
export const minGroundedShare = 0.6;

/**
 * Check a reply. Accepted: valid JSON of the reply schema, one line without markup, at least two content words
 * and `minGroundedShare` of them found in the evidence, and not the opposite of its strongest statement. The
 * accepted text is redacted (credentials, card numbers, contact details) before it is stored.
 */
export function checkWording(reply: string, draft: PrincipleDraft): WordingCheck {
  let parsed: unknown;
  try {
    parsed = JSON.parse(reply);
  } catch {
    return { ok: false, reason: "reply is not JSON" };
  }
  const shape = wordingReply.safeParse(parsed);
  if (!shape.success) return { ok: false, reason: "reply does not match the wording schema" };
  const statement = shape.data.statement.trim().replace(/\s+/g, " ");
  if (/[{}[\]<>]|\n/.test(shape.data.statement.trim()))
    return { ok: false, reason: "wording holds markup or several lines" };
  const words = contentWords(statement);
  if (words.size < 2) return { ok: false, reason: "wording has fewer than two content words" };
  const evidence = new Set(draft.statements.flatMap((s) => [...contentWords(s)]));
  const grounded = [...words].filter((w) => evidence.has(w)).length / words.size;
  if (grounded < minGroundedShare)
    return {
      ok: false,
      reason: `wording is not grounded in the evidence (${Math.round(grounded * 100)} % of its words)`,
    };
  const strongest = draft.statements[0];
  if (strongest !== undefined && areOpposites(statement, strongest))
    return { ok: false, reason: "wording says the opposite of its evidence" };
  return { ok: true, statement: redact(statement).text };
}
