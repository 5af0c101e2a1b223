/**
 * Recall over long conversations, as plain data: a conversation set (sessions of turns with ids, questions whose
 * evidence is a list of turn ids), a loader for LoCoMo's published JSON, how a turn is written into memory, and
 * the scores (recall@k, reciprocal rank) per question kind. No I/O beyond reading the set; bench/devset-recall.ts
 * runs it against a real Cortex.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export const questionKinds = ["single-hop", "multi-hop", "temporal", "open-domain"] as const;
export type QuestionKind = (typeof questionKinds)[number];

export interface ConversationTurn {
  /** The set's own id of the turn, what evidence lists name (LoCoMo: "D3:12"). */
  id: string;
  speaker: string;
  text: string;
}

export interface ConversationSession {
  /** When the session took place, ISO 8601. */
  at: string;
  turns: ConversationTurn[];
}

export interface ConversationQuestion {
  question: string;
  kind: QuestionKind;
  /** Turn ids that hold the answer; all of them for a question that needs two turns. */
  evidence: string[];
}

export interface Conversation {
  id: string;
  /** The first speaker: the person whose memory this is. */
  speakers: [string, string];
  sessions: ConversationSession[];
  questions: ConversationQuestion[];
}

/**
 * LoCoMo's categories (Maharana et al., 2024, and the evaluation code that accompanies it): 1 multi-hop,
 * 2 temporal, 3 open-domain, 4 single-hop. Category 5 is adversarial (the question asks about something the
 * conversation never said), so it has no evidence to find and is left out of recall.
 */
const locomoKinds: Record<number, QuestionKind> = {
  1: "multi-hop",
  2: "temporal",
  3: "open-domain",
  4: "single-hop",
};

const months = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];

/** LoCoMo writes session times as "1:56 pm on 8 May, 2023"; read as UTC, since the set names no zone. */
export function parseSessionTime(text: string): string {
  const match = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i.exec(text);
  const month = months.indexOf(match?.[5]?.toLowerCase() ?? "");
  if (match === null || month === -1) throw new Error(`unreadable session time "${text}"`);
  const [, hour12, minute, half, day, , year] = match;
  const hour = (Number(hour12) % 12) + (half?.toLowerCase() === "pm" ? 12 : 0);
  return new Date(Date.UTC(Number(year), month, Number(day), hour, Number(minute))).toISOString();
}

interface LocomoTurn {
  speaker: string;
  dia_id: string;
  text: string;
}

interface LocomoQuestion {
  question: string;
  category: number;
  evidence?: string[];
}

function asTurns(value: unknown, where: string): LocomoTurn[] {
  if (!Array.isArray(value)) throw new Error(`${where} is not a list of turns`);
  return value.map((turn, index) => {
    const { speaker, dia_id: id, text } = (turn ?? {}) as Partial<LocomoTurn>;
    if (typeof speaker !== "string" || typeof id !== "string" || typeof text !== "string")
      throw new Error(`${where}[${index}] lacks speaker, dia_id or text`);
    return { speaker, dia_id: id, text };
  });
}

/**
 * One LoCoMo sample: either the published `locomo10.json` entry ({sample_id, conversation, qa}) or the
 * per-conversation files of its multimodal release (speaker_a, session_N, session_N_date_time and qa at the top).
 */
export function locomoConversation(sample: Record<string, unknown>, fallbackId: string): Conversation {
  const body = (
    typeof sample.conversation === "object" && sample.conversation !== null ? sample.conversation : sample
  ) as Record<string, unknown>;
  const id = typeof sample.sample_id === "string" ? sample.sample_id : fallbackId;
  const { speaker_a: first, speaker_b: second } = body;
  if (typeof first !== "string" || typeof second !== "string")
    throw new Error(`conversation ${id} names no speaker_a and speaker_b`);
  const sessionNumbers = Object.keys(body)
    .map((key) => /^session_(\d+)$/.exec(key)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  const sessions = sessionNumbers.map((n) => {
    const time = body[`session_${n}_date_time`];
    if (typeof time !== "string") throw new Error(`conversation ${id} session ${n} has no date_time`);
    const turns = asTurns(body[`session_${n}`], `conversation ${id} session_${n}`);
    return {
      at: parseSessionTime(time),
      turns: turns.map((turn) => ({ id: turn.dia_id, speaker: turn.speaker, text: turn.text })),
    };
  });
  const turnIds = new Set(sessions.flatMap((session) => session.turns.map((turn) => turn.id)));
  const qa = Array.isArray(sample.qa) ? (sample.qa as LocomoQuestion[]) : [];
  const questions = qa.flatMap((entry): ConversationQuestion[] => {
    const kind = locomoKinds[entry.category];
    // A few evidence entries in the release name turns that do not exist (typos such as "D:11:26"): kept out.
    const evidence = (entry.evidence ?? []).filter((turnId) => turnIds.has(turnId));
    if (kind === undefined || evidence.length === 0) return [];
    return [{ question: String(entry.question), kind, evidence }];
  });
  return { id, speakers: [first, second], sessions, questions };
}

/** Every conversation in a LoCoMo file (a list of samples or one sample) or a folder of such files. */
export function loadLocomo(path: string): Conversation[] {
  if (statSync(path).isDirectory()) {
    return readdirSync(path)
      .filter((name) => name.endsWith(".json"))
      .sort()
      .flatMap((name) => loadLocomo(join(path, name)));
  }
  const parsed = JSON.parse(readFileSync(path, "utf8")) as unknown;
  const name = path.replace(/^.*\//, "").replace(/\.json$/, "");
  if (Array.isArray(parsed))
    return parsed.map((sample, index) =>
      locomoConversation(sample as Record<string, unknown>, `${name}-${index}`),
    );
  return [locomoConversation(parsed as Record<string, unknown>, name)];
}

/** How big a set is: conversations, turns and questions. */
export function setSize(conversations: readonly Conversation[]) {
  return {
    conversations: conversations.length,
    turns: conversations.reduce(
      (sum, conversation) => sum + conversation.sessions.reduce((n, session) => n + session.turns.length, 0),
      0,
    ),
    questions: conversations.reduce((sum, conversation) => sum + conversation.questions.length, 0),
  };
}

/**
 * How a turn is written into memory. `plain`: the words only. `speaker`: "Caroline: …", as a transcript reads.
 * `dated`: "[8 May 2023] Caroline: …", so a question's names and dates meet the turn's words.
 */
export const turnRenderings = ["plain", "speaker", "dated"] as const;
export type TurnRendering = (typeof turnRenderings)[number];

export function renderTurn(turn: ConversationTurn, sessionAt: string, rendering: TurnRendering): string {
  if (rendering === "plain") return turn.text;
  const spoken = `${turn.speaker}: ${turn.text}`;
  if (rendering === "speaker") return spoken;
  const date = new Date(sessionAt).toLocaleDateString("en-GB", {
    day: "numeric",
    month: "long",
    year: "numeric",
    timeZone: "UTC",
  });
  return `[${date}] ${spoken}`;
}

export interface QuestionScore {
  kind: QuestionKind;
  /** Share of the evidence turns among the first k, for each k asked for. */
  recall: Record<number, number>;
  /** 1 / the rank of the first evidence turn, 0 when none was ranked. */
  reciprocalRank: number;
}

/** Scores one ranked list of turn ids (best first; repeats count once, at their first place). */
export function scoreRanking(
  ranked: readonly string[],
  question: ConversationQuestion,
  ks: readonly number[],
): QuestionScore {
  const distinct = [...new Set(ranked)];
  const evidence = new Set(question.evidence);
  const firstHit = distinct.findIndex((turnId) => evidence.has(turnId));
  const recall: Record<number, number> = {};
  for (const k of ks) {
    recall[k] = distinct.slice(0, k).filter((turnId) => evidence.has(turnId)).length / evidence.size;
  }
  return { kind: question.kind, recall, reciprocalRank: firstHit === -1 ? 0 : 1 / (firstHit + 1) };
}

export interface RecallSummary {
  questions: number;
  recall: Record<string, number>;
  mrr: number;
}

const mean = (values: readonly number[]) =>
  values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
const rounded = (value: number) => Math.round(value * 1000) / 1000;

function summarize(scores: readonly QuestionScore[], ks: readonly number[]): RecallSummary {
  return {
    questions: scores.length,
    recall: Object.fromEntries(
      ks.map((k) => [`@${k}`, rounded(mean(scores.map((score) => score.recall[k] ?? 0)))]),
    ),
    mrr: rounded(mean(scores.map((score) => score.reciprocalRank))),
  };
}

/** All questions, then each kind that has any. */
export function summarizeByKind(
  scores: readonly QuestionScore[],
  ks: readonly number[],
): { all: RecallSummary; byKind: Partial<Record<QuestionKind, RecallSummary>> } {
  const byKind: Partial<Record<QuestionKind, RecallSummary>> = {};
  for (const kind of questionKinds) {
    const ofKind = scores.filter((score) => score.kind === kind);
    if (ofKind.length > 0) byKind[kind] = summarize(ofKind, ks);
  }
  return { all: summarize(scores, ks), byKind };
}
