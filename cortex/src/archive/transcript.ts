/**
 * A finished session's transcript as an archive document and as retrieval chunks (seed 004's "archive and index"
 * for a whole session). Pure: the request, the hash and `now` come in as data.
 */
import type {
  Chunk,
  IngestEvent,
  MemoryDocument,
  Principal,
  TranscriptArchiveRequest,
} from "@remram/contract";
import { planIngest } from "../core/ingest-plan.js";

/**
 * The memory document of a transcript: owned by the session's principal alone (a conversation is its person's,
 * never the household's), who wrote its user turns. Its time is its first message's, so a resend hashes the same.
 */
export function transcriptDocument(request: TranscriptArchiveRequest): MemoryDocument {
  const { principal, part } = request;
  const times = request.messages.flatMap((message) => (message.at === undefined ? [] : [message.at]));
  const createdAt = times.reduce(
    (earliest, at) => (Date.parse(at) < Date.parse(earliest) ? at : earliest),
    times[0] ?? request.endedAt,
  );
  return {
    createdAt,
    source: { sessionId: request.sessionId, channel: request.channel, agentId: principal.agentId },
    messages: request.messages.map((message) =>
      message.role === "user" && message.authorId === undefined
        ? { ...message, authorId: principal.userId }
        : message,
    ),
    attachments: request.attachments,
    tags: [
      "transcript",
      `ended:${request.endReason}`,
      ...(part.count > 1 ? [`part:${part.index + 1}/${part.count}`] : []),
    ],
    consentScope: {
      ownerIds: [principal.userId],
      privacy: request.privacy,
      allowRecall: request.allowRecall,
    },
  };
}

const speaker: Record<MemoryDocument["messages"][number]["role"], string> = {
  user: "User",
  assistant: "Assistant",
  system: "System",
  tool: "Tool",
};

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * The transcript as text to chunk: one paragraph per message, its speaker first. Blank lines separate messages,
 * so sections (L1) break between messages where they can.
 */
export function transcriptText(document: MemoryDocument): string {
  return document.messages
    .map((message) => ({ who: speaker[message.role], text: message.content.trim() }))
    .filter((message) => message.text !== "")
    .map((message) => `${message.who}: ${message.text}`)
    .join("\n\n");
}

/** Words of the summary; every user turn's lead gets a share until they run out. */
export const summaryWords = 80;
const leadWordsPerTurn = 16;

/**
 * An extractive summary, the index's card for the document: where and when, then the lead of each user turn (what
 * the person talked about), then the assistant's lead when there is room. Deterministic: no model decides it.
 */
export function transcriptSummary(document: MemoryDocument, words = summaryWords): string {
  const day = document.createdAt.slice(0, 10);
  const heading = `Conversation on ${document.source.channel}, ${day}:`;
  const turns = (role: "user" | "assistant") =>
    document.messages
      .filter((message) => message.role === role)
      .map((message) => collapse(message.content).split(" ").filter(Boolean))
      .filter((turn) => turn.length > 0);
  const picked: string[] = [];
  let budget = words;
  for (const turn of [...turns("user"), ...turns("assistant")]) {
    if (budget <= 0) break;
    const taken = turn.slice(0, Math.min(budget, leadWordsPerTurn));
    picked.push(taken.join(" ") + (taken.length < turn.length ? " …" : ""));
    budget -= taken.length;
  }
  const body = picked.length === 0 ? "(no text)" : picked.join(" · ");
  return `${heading} ${body}`.slice(0, 4000);
}

/** Ingest identifiers are narrower than a session id; one that does not fit is left out of provenance. */
const identifierPattern = /^[A-Za-z0-9._:@/+-]{1,128}$/;

/**
 * The ingest event that chunks the (already redacted) document: source id = the archive hash, so every chunk
 * cites it and an erasure that rewrites the document re-points them. A document that may not be recalled in
 * full is chunked from its summary only: its passages would recall it piece by piece.
 */
export function transcriptChunkEvent(
  document: MemoryDocument,
  hash: string,
  summary: string,
  principal: Pick<Principal, "userId" | "householdId" | "agentId">,
): IngestEvent {
  const { source, consentScope } = document;
  return {
    kind: "document",
    provenanceKey: `transcript:${hash}`,
    ...(identifierPattern.test(source.sessionId) ? { sessionId: source.sessionId } : {}),
    agentId: principal.agentId,
    channel: source.channel,
    observedAt: document.createdAt,
    scope: "user",
    owner: {
      userId: principal.userId,
      ...(principal.householdId === undefined ? {} : { householdId: principal.householdId }),
    },
    privacy: consentScope.privacy,
    consent: { retrieval: true, agents: ["*"] },
    sourceKind: "transcript",
    sourceId: hash,
    title: `Conversation on ${source.channel}, ${document.createdAt.slice(0, 10)}`,
    text: consentScope.allowRecall ? transcriptText(document) || summary : summary,
    summary,
  };
}

/** The L0 summary, L1 sections and L2 passages of a transcript, ids derived from its hash (a resend duplicates). */
export function transcriptChunks(
  document: MemoryDocument,
  hash: string,
  summary: string,
  principal: Pick<Principal, "userId" | "householdId" | "agentId">,
  now: string,
): Chunk[] {
  const event = transcriptChunkEvent(document, hash, summary, principal);
  const [planned] = planIngest([event], { privacy: document.consentScope.privacy, now });
  return planned?.chunks ?? [];
}
