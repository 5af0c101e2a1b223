/**
 * The pollution benchmark's scoring: what a conversation left in memory, judged against what its turns were
 * labelled with. Pure. A stored object is
 * - wanted: it holds every key term of a gold fact that is still current (not replaced by a later one);
 * - stale: it holds only a fact (or is, or restates, a seed) that a later turn replaced: the correction did not
 *   take;
 * - from injected content: it restates memory the run was shown (a seed) and no gold fact;
 * - junk: anything else a person would not want remembered.
 * A current fact held by more than one object counts the extra ones as duplicates.
 */
import type { Conversation, GoldFact, TurnCategory } from "./pollution-corpus.js";
import { goldFacts } from "./pollution-corpus.js";

export interface StoredObject {
  id: string;
  statement: string;
  /** The corpus turn it came from (`<session>#<index>`), when its provenance names one. */
  sourceTurn?: string;
  /** The seed memory item it is (seeded before the conversation), if it is one. */
  seedKey?: string;
}

export interface ConversationScore {
  conversation: string;
  stored: number;
  wanted: number;
  stale: number;
  fromInjected: number;
  junk: number;
  duplicates: number;
  /** Current gold facts, and how many of them memory holds. */
  currentFacts: number;
  factsKept: number;
  /** Junk objects by the category of the turn they came from ("unknown" without provenance). */
  junkByCategory: Partial<Record<TurnCategory | "unknown", number>>;
  junkStatements: string[];
}

function holds(statement: string, fact: Pick<GoldFact, "keyTerms">): boolean {
  const text = statement.toLowerCase();
  return fact.keyTerms.every((term) => text.includes(term.toLowerCase()));
}

function words(text: string): Set<string> {
  return new Set((text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []).map((word) => word.slice(0, 5)));
}

/** Whether a statement restates a seed: most of its words (first five letters) are the seed's. */
function restates(statement: string, seed: string): boolean {
  const own = words(statement);
  if (own.size === 0) return false;
  const theirs = words(seed);
  return [...own].filter((word) => theirs.has(word)).length / own.size >= 0.6;
}

export function scoreConversation(
  conversation: Conversation,
  objects: readonly StoredObject[],
): ConversationScore {
  const facts = goldFacts(conversation);
  // `replaces` names an earlier fact or a seed item.
  const replaced = new Set(facts.flatMap((fact) => (fact.replaces === undefined ? [] : [fact.replaces])));
  const current = facts.filter((fact) => !replaced.has(fact.id));
  const stale = facts.filter((fact) => replaced.has(fact.id));
  const staleSeeds = conversation.seedMemory.filter((seed) => replaced.has(seed.key));
  const categoryOf = new Map<string, TurnCategory>();
  for (const session of conversation.sessions)
    session.turns.forEach((turn, index) => {
      categoryOf.set(`${session.sessionId}#${index}`, turn.category);
    });

  // Seeds are not what the conversation stored; one still in memory after a turn replaced it is stale.
  const seeds = objects.filter((object) => object.seedKey !== undefined);
  const stored = objects.filter((object) => object.seedKey === undefined);
  const score: ConversationScore = {
    conversation: conversation.id,
    stored: stored.length,
    wanted: 0,
    stale: 0,
    fromInjected: 0,
    junk: 0,
    duplicates: 0,
    currentFacts: current.length,
    factsKept: 0,
    junkByCategory: {},
    junkStatements: [],
  };
  score.stale += seeds.filter((seed) => replaced.has(seed.seedKey ?? "")).length;
  const holders = new Map<string, number>();
  for (const object of stored) {
    const matches = current.filter((fact) => holds(object.statement, fact));
    if (matches.length > 0) {
      score.wanted += 1;
      for (const fact of matches) holders.set(fact.id, (holders.get(fact.id) ?? 0) + 1);
      continue;
    }
    if (
      stale.some((fact) => holds(object.statement, fact)) ||
      staleSeeds.some((seed) => restates(object.statement, seed.statement))
    ) {
      score.stale += 1;
      continue;
    }
    if (conversation.seedMemory.some((seed) => restates(object.statement, seed.statement))) {
      score.fromInjected += 1;
      continue;
    }
    score.junk += 1;
    const category =
      object.sourceTurn === undefined ? "unknown" : (categoryOf.get(object.sourceTurn) ?? "unknown");
    score.junkByCategory[category] = (score.junkByCategory[category] ?? 0) + 1;
    score.junkStatements.push(object.statement);
  }
  score.factsKept = holders.size;
  score.duplicates = [...holders.values()].reduce((sum, count) => sum + Math.max(0, count - 1), 0);
  return score;
}

export interface PollutionTotals {
  stored: number;
  wanted: number;
  stale: number;
  fromInjected: number;
  junk: number;
  duplicates: number;
  /** junk / stored: the share of memory a person would not want. */
  junkRate: number;
  /** Current facts memory holds / current facts the conversations stated. */
  factRecall: number;
}

export function totals(scores: readonly ConversationScore[]): PollutionTotals {
  const sum = (pick: (score: ConversationScore) => number) =>
    scores.reduce((total, score) => total + pick(score), 0);
  const stored = sum((score) => score.stored);
  const facts = sum((score) => score.currentFacts);
  const round = (value: number) => Math.round(value * 10_000) / 10_000;
  return {
    stored,
    wanted: sum((score) => score.wanted),
    stale: sum((score) => score.stale),
    fromInjected: sum((score) => score.fromInjected),
    junk: sum((score) => score.junk),
    duplicates: sum((score) => score.duplicates),
    junkRate: stored === 0 ? 0 : round(sum((score) => score.junk) / stored),
    factRecall: facts === 0 ? 0 : round(sum((score) => score.factsKept) / facts),
  };
}
