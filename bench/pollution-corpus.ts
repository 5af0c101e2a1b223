/**
 * The pollution benchmark's corpus (bench/fixtures/pollution): long conversations written by hand for this project,
 * each user turn labelled with what a careful person would want remembered from it. See its README.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

export const turnCategories = [
  "small_talk",
  "question",
  "repeated_question",
  "task",
  "durable",
  "correction",
  "explicit_save",
  "transient",
  "tool_noise",
] as const;
export type TurnCategory = (typeof turnCategories)[number];

const goldFact = z.strictObject({
  id: z.string().min(1),
  statement: z.string().min(1),
  kind: z.enum(["fact", "preference", "constraint", "decision", "correction"]),
  scope: z.enum(["user", "household"]),
  /** Substrings (any case) every correct memory of the fact contains. */
  keyTerms: z.array(z.string().min(1)).min(1).max(6),
  /** An earlier fact of the conversation this one corrects or updates: that one is stale from here on. */
  replaces: z.string().optional(),
});
export type GoldFact = z.infer<typeof goldFact>;

const turn = z.strictObject({
  userId: z.string().min(1),
  user: z.string(),
  assistant: z.string(),
  tool: z.strictObject({ name: z.string().min(1), output: z.string() }).optional(),
  echoesSeed: z.array(z.string()).optional(),
  mistake: z.boolean().default(false),
  category: z.enum(turnCategories),
  facts: z.array(goldFact).default([]),
  /** Facts of earlier turns this one states again: a memory should reinforce them, not store them twice. */
  restates: z.array(z.string()).optional(),
});
export type CorpusTurn = z.infer<typeof turn>;

export const conversationSchema = z.strictObject({
  id: z.string().min(1),
  household: z.string().min(1),
  people: z.array(z.strictObject({ userId: z.string().min(1), description: z.string() })).min(1),
  seedMemory: z
    .array(
      z.strictObject({
        key: z.string().min(1),
        userId: z.string().min(1),
        type: z.enum(["fact", "preference", "constraint", "decision"]),
        scope: z.enum(["user", "household"]),
        statement: z.string().min(1),
      }),
    )
    .default([]),
  sessions: z
    .array(
      z.strictObject({
        sessionId: z.string().min(1),
        date: z.iso.date(),
        turns: z.array(turn).min(1),
      }),
    )
    .min(1),
});
export type Conversation = z.infer<typeof conversationSchema>;

export const corpusDir = join(import.meta.dirname, "fixtures", "pollution", "conversations");

/** Every conversation of the corpus, in file order; a malformed file fails loudly with its name. */
export function loadCorpus(dir = corpusDir): Conversation[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith(".json"))
    .sort()
    .map((file) => {
      const parsed = conversationSchema.safeParse(JSON.parse(readFileSync(join(dir, file), "utf8")));
      if (!parsed.success) throw new Error(`${file}: ${z.prettifyError(parsed.error)}`);
      return parsed.data;
    });
}

/** Every gold fact of a conversation, in order. */
export function goldFacts(conversation: Conversation): GoldFact[] {
  return conversation.sessions.flatMap((session) => session.turns.flatMap((t) => t.facts));
}
