import { artifactProposalObjectName } from "@remram/contract";
import type { ExplicitSaveAnswer, ExplicitSaveBody } from "./cortex-contract.js";
import type { ExplicitSaveDirective } from "./explicit-save.js";
import { type Principal, toIdentifier } from "./principal.js";

/**
 * An explicit save's request to Cortex and what the run's model is told about it, pure. The model gets a short
 * instruction in the system context so its reply can say what was saved, and — when a page proposal waits — who
 * approves it and how: the person who caused it hears it in the conversation.
 */

/** What became of a save, as far as the run could wait for it. */
export type SaveOutcome =
  | { kind: "saved"; answer: ExplicitSaveAnswer }
  /** Cortex slow, down or failing: on disk, delivered by the service when Cortex answers. */
  | { kind: "queued" }
  /** Cortex refused it for what it is (an erased person, a scope the policy forbids): not saved. */
  | { kind: "rejected"; message: string }
  /** The queue was full (drop-newest): not saved. */
  | { kind: "dropped" }
  /** "save this" with nothing of the person's to save. */
  | { kind: "nothing_to_save" };

export interface ApprovalPlace {
  appliance?: string | undefined;
  namespace?: string | undefined;
}

const turnIdChars = 128;

/**
 * The /remember body: the principal from the gateway session, the household only when the person asked for it and
 * the session has one (else their own scope, and the reply says so). The turn id makes a retried delivery a no-op.
 */
export function saveRequestFor(params: {
  principal: Principal;
  directive: ExplicitSaveDirective;
  statement: string;
  sessionKey: string | undefined;
  runId: string | undefined;
  channel: string | undefined;
  now: Date;
}): ExplicitSaveBody {
  const { principal, directive } = params;
  const household = directive.scope === "household" && principal.householdId !== undefined;
  return {
    principal: {
      userId: principal.userId,
      agentId: principal.agentId,
      ...(principal.householdId === undefined ? {} : { householdId: principal.householdId }),
    },
    statement: params.statement,
    type: directive.type,
    scope: household ? "household" : "user",
    ...(params.sessionKey === undefined ? {} : { sessionId: toIdentifier(params.sessionKey) }),
    ...(params.runId === undefined ? {} : { turnId: params.runId.slice(0, turnIdChars) }),
    ...(params.channel === undefined ? {} : { channel: params.channel.slice(0, 128) }),
    observedAt: params.now.toISOString(),
  };
}

export const saveContextBegin = "<<<remram-save";
export const saveContextEnd = "remram-save>>>";

/** Stored text inside the instruction: one line, quotes and the block's delimiters defused. */
function quoted(text: string): string {
  const line = text
    .replace(/\s+/g, " ")
    .replace(/<<<|>>>/g, "")
    .replace(/"/g, "'")
    .trim();
  return `"${line.length > 300 ? `${line.slice(0, 299)}…` : line}"`;
}

function approveCommand(proposalId: string, place: ApprovalPlace): string {
  const name =
    place.appliance === undefined
      ? `<appliance>-${proposalId}`
      : artifactProposalObjectName(place.appliance, proposalId);
  return `kubectl remram approve ${name}${place.namespace === undefined ? "" : ` -n ${place.namespace}`}`;
}

function pageLine(answer: ExplicitSaveAnswer, place: ApprovalPlace): { line: string; waits: boolean } {
  const { proposal } = answer;
  const page = proposal.artifactPath === undefined ? "its page" : `the page ${proposal.artifactPath}`;
  switch (proposal.status) {
    case "pending":
      return {
        waits: true,
        line:
          `A proposal to add it to ${proposal.title === undefined ? page : `${page} ("${proposal.title}")`} now waits for ` +
          "approval: it becomes part of the approved memory pages only when someone allowed to approve Remram " +
          `proposals for this household approves it, with \`${approveCommand(proposal.id ?? "<proposal>", place)}\` ` +
          "(or turns it down with `kubectl remram deny`).",
      };
    case "promoted":
      return { waits: false, line: `It is already on ${page}, which an approver has approved.` };
    case "denied":
      return {
        waits: false,
        line: `A change of ${page} with it was turned down by an approver before, so it is not proposed again; the memory itself is kept.`,
      };
    default:
      return {
        waits: false,
        line: "A page with it will be proposed for approval at the next nightly memory reconciliation.",
      };
  }
}

/** The instruction appended to the run's system context for a save in this turn. */
export function renderSaveContext(params: {
  directive: ExplicitSaveDirective;
  statement: string;
  outcome: SaveOutcome;
  /** The person asked for the household, but the session has none: saved as their own. */
  householdUnavailable: boolean;
  approval: ApprovalPlace;
}): string {
  const { outcome } = params;
  const lines: string[] = [];
  switch (outcome.kind) {
    case "saved": {
      const { answer } = outcome;
      const whose = answer.scope === "household" ? "their household's memory" : "their own memory";
      const page = pageLine(answer, params.approval);
      lines.push(
        `The person asked you to remember this, and it was saved just now to ${whose} as a ${answer.type}: ${quoted(answer.statement)}.`,
        ...(params.householdUnavailable
          ? ["It was saved for them only: this conversation belongs to no household."]
          : []),
        page.line,
        page.waits
          ? "Tell the person briefly what was saved, that the page waits for approval, and how it is approved."
          : "Tell the person briefly what was saved.",
      );
      break;
    }
    case "queued":
      lines.push(
        `The person asked you to remember this: ${quoted(params.statement)}. The memory service did not answer in time, so it is queued and will be saved as soon as the service is reachable.`,
        "Tell the person briefly that it will be saved.",
      );
      break;
    case "rejected":
      lines.push(
        `The person asked you to remember this: ${quoted(params.statement)}, but the memory service refused it (${outcome.message.replace(/\s+/g, " ").slice(0, 200)}).`,
        "Tell the person it was not saved.",
      );
      break;
    case "dropped":
      lines.push(
        `The person asked you to remember this: ${quoted(params.statement)}, but it could not be saved now (the memory service is unreachable and the save queue is full).`,
        "Tell the person it was not saved and to ask again later.",
      );
      break;
    case "nothing_to_save":
      lines.push(
        "The person asked you to save something, but there is nothing of theirs in this conversation to save.",
        "Ask them what they want remembered.",
      );
      break;
  }
  lines.push("Do not claim that anything else was saved.");
  return [saveContextBegin, ...lines, saveContextEnd].join("\n");
}
