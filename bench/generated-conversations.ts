/**
 * Conversation sets the project generates itself, for `make bench` (the LoCoMo dev set may not be committed):
 * a person talking to their assistant over months of sessions, in the shape bench/conversation-recall.ts scores.
 * Built so that it does not flatter a retriever: every question is worded apart from its evidence (no answer
 * word, few shared words), each fact has distractors that share its vocabulary (the same kind of fact about a
 * friend or colleague, and the old value of a fact that changed), small talk fills most turns, and the
 * assistant's replies never repeat the answer. Kinds: single-hop, temporal (a fact that changed, what happened
 * when), multi-hop (a relation in one session, a property of that relative in another) and open-domain (a
 * preference to infer from). Pure and seeded: the same options give the same set.
 */
import { type Rng, seededRng } from "../cortex/src/testing/secrets.js";
import type {
  Conversation,
  ConversationQuestion,
  ConversationTurn,
  QuestionKind,
} from "./conversation-recall.js";
import {
  assistantFollowUps,
  assistantReplies,
  changingFacts,
  plainFacts,
  preferences,
  relatives,
  smallTalk,
  smallTalkOpeners,
} from "./generated-facts.js";

export interface GeneratedSetOptions {
  seed: number;
  conversations: number;
  /** Sessions per conversation, a few days to two weeks apart. */
  sessions: number;
  /** Small-talk exchanges (a person's turn and the reply) per session, besides the facts. */
  smallTalkPerSession: number;
}

export const defaultGeneratedSet: GeneratedSetOptions = {
  seed: 20261129,
  conversations: 8,
  sessions: 14,
  smallTalkPerSession: 9,
};

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;
function shuffled<T>(rng: Rng, items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(rng() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}
/** Two different values of a pool. */
function pickTwo<T>(rng: Rng, items: readonly T[]): [T, T] {
  const [first, second] = shuffled(rng, items);
  return [first as T, second as T];
}

export const fill = (template: string, slots: Readonly<Record<string, string>>): string =>
  template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = slots[name];
    if (value === undefined) throw new Error(`template "${template}" names {${name}}, which has no value`);
    return value;
  });

const people = [
  "Maya",
  "Tom",
  "Priya",
  "Jonas",
  "Aiko",
  "Femi",
  "Lucia",
  "Oskar",
  "Nadia",
  "Callum",
  "Ines",
  "Ravi",
];
const others = [
  "Greta",
  "Marco",
  "Hana",
  "Dev",
  "Sofia",
  "Liam",
  "Yusuf",
  "Elena",
  "Kofi",
  "Mei",
  "Pavel",
  "Rosa",
];

/** A statement the person makes in a given session, and the questions it (with others) answers. */
interface PlannedTurn {
  session: number;
  text: string;
  /** Keys of the questions this turn is evidence for. */
  answers: string[];
}

interface PlannedQuestion {
  key: string;
  question: string;
  kind: QuestionKind;
}

interface Plan {
  turns: PlannedTurn[];
  questions: PlannedQuestion[];
}

/** The facts of one person: which templates, which values, in which sessions (changes and relations in order). */
function planFacts(rng: Rng, sessions: number, id: string): Plan {
  const turns: PlannedTurn[] = [];
  const questions: PlannedQuestion[] = [];
  const session = () => Math.floor(rng() * sessions);
  const ordered = (): [number, number] => {
    const first = Math.floor(rng() * Math.max(1, sessions - 2));
    return [first, first + 1 + Math.floor(rng() * (sessions - first - 1))];
  };
  const friends = shuffled(rng, others);

  for (const [n, fact] of shuffled(rng, plainFacts).slice(0, 9).entries()) {
    const [value, distractor] = pickTwo(rng, fact.values);
    const key = `${id}:plain:${n}`;
    turns.push({ session: session(), text: fill(pick(rng, fact.said), { value }), answers: [key] });
    const friend = friends[n % friends.length] as string;
    turns.push({
      session: session(),
      text: fill(fact.distractor, { value: distractor, friend }),
      answers: [],
    });
    questions.push({ key, question: pick(rng, fact.asked), kind: "single-hop" });
  }

  for (const [n, fact] of shuffled(rng, changingFacts).slice(0, 3).entries()) {
    const [before, after] = pickTwo(rng, fact.values);
    const [first, later] = ordered();
    const now = `${id}:now:${n}`;
    const when = `${id}:when:${n}`;
    turns.push({ session: first, text: fill(fact.first, { value: before }), answers: [when] });
    turns.push({ session: later, text: fill(fact.changed, { before, after }), answers: [now] });
    questions.push({ key: now, question: fact.askedNow, kind: "temporal" });
    questions.push({ key: when, question: fact.askedWhen, kind: "temporal" });
  }

  for (const [n, relative] of shuffled(rng, relatives).slice(0, 3).entries()) {
    const name = pick(rng, relative.names);
    const value = pick(rng, relative.values);
    const [first, later] = ordered();
    const key = `${id}:hop:${n}`;
    turns.push({ session: first, text: fill(relative.introduced, { name }), answers: [key] });
    turns.push({ session: later, text: fill(relative.property, { name, value }), answers: [key] });
    questions.push({ key, question: relative.asked, kind: "multi-hop" });
  }

  for (const [n, preference] of shuffled(rng, preferences).slice(0, 3).entries()) {
    const key = `${id}:open:${n}`;
    turns.push({ session: session(), text: pick(rng, preference.said), answers: [key] });
    questions.push({ key, question: preference.asked, kind: "open-domain" });
  }
  return { turns, questions };
}

const dayMs = 86_400_000;
const joined = (...parts: string[]) => parts.filter((part) => part !== "").join(" ");

/** One person's conversation with their assistant: sessions of small talk with the planned facts among it. */
function generateConversation(rng: Rng, options: GeneratedSetOptions, index: number): Conversation {
  const person = people[index % people.length] as string;
  const id = `generated-${index + 1}`;
  const plan = planFacts(rng, options.sessions, id);
  const evidence = new Map<string, string[]>();
  let at = Date.UTC(2025, Math.floor(rng() * 12), 1 + Math.floor(rng() * 28), 18, 0);
  const sessions = Array.from({ length: options.sessions }, (_, s) => {
    if (s > 0) at += (3 + Math.floor(rng() * 12)) * dayMs;
    const statements = [
      ...plan.turns.filter((turn) => turn.session === s),
      ...Array.from({ length: options.smallTalkPerSession }, () => ({
        session: s,
        text: joined(pick(rng, smallTalkOpeners), pick(rng, smallTalk)),
        answers: [] as string[],
      })),
    ];
    const turns: ConversationTurn[] = [];
    for (const statement of shuffled(rng, statements)) {
      const turnId = `S${s + 1}:${turns.length + 1}`;
      turns.push({ id: turnId, speaker: person, text: statement.text });
      for (const key of statement.answers) evidence.set(key, [...(evidence.get(key) ?? []), turnId]);
      turns.push({
        id: `S${s + 1}:${turns.length + 1}`,
        speaker: "Assistant",
        text: joined(pick(rng, assistantReplies), pick(rng, assistantFollowUps)),
      });
    }
    return { at: new Date(at).toISOString(), turns };
  });
  const questions = plan.questions.map(
    (question): ConversationQuestion => ({
      question: question.question,
      kind: question.kind,
      evidence: evidence.get(question.key) ?? [],
    }),
  );
  return { id, speakers: [person, "Assistant"], sessions, questions };
}

/** The set: `conversations` people, each with their own facts, values and dates. */
export function generateConversations(options: GeneratedSetOptions = defaultGeneratedSet): Conversation[] {
  // A fact that changes, and a relative described after being named, need two sessions.
  if (!Number.isInteger(options.sessions) || options.sessions < 2)
    throw new Error(`a generated set needs at least 2 sessions, not ${options.sessions}`);
  const rng = seededRng(options.seed);
  return Array.from({ length: options.conversations }, (_, index) =>
    generateConversation(rng, options, index),
  );
}
