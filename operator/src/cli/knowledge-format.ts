/**
 * What `kubectl remram knowledge` prints of remram-app's answers, and what it says when the app refuses (pure).
 * The answers are Cortex's, passed through by the app (contract/src/person-knowledge.ts).
 */
import type {
  erasureResponse,
  KnowledgeObject,
  PersonKnowledgeCorrectResponse,
  PersonKnowledgeForgetResponse,
  PersonKnowledgeItem,
  PersonKnowledgeResponse,
} from "@remram/contract";
import type { z } from "zod";
import { nextPageHint } from "./knowledge.js";

export type ErasureAnswer = z.output<typeof erasureResponse>;

/** A statement on one line: newlines and runs of spaces become one space. */
const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

/** `text` cut to `width` characters, an ellipsis marking the cut. */
export function truncate(text: string, width: number): string {
  if (text.length <= width) return text;
  return width <= 1 ? "…".slice(0, width) : `${text.slice(0, width - 1)}…`;
}

/** The narrowest the statement column is cut to: narrower terminals wrap instead. */
const minStatementWidth = 20;

/**
 * The listing as a table: id, type, confidence, status, scope, statement (cut to `width`, the terminal's columns;
 * whole when undefined, as when piped). Under it, when there is a next page, how to get it.
 */
export function formatKnowledgeTable(answer: PersonKnowledgeResponse, width?: number): string {
  if (answer.items.length === 0)
    return answer.total === 0 ? "nothing remembered matches" : `none on this page (of ${answer.total})`;
  const rows = answer.items.map(({ object }) => [
    object.id,
    object.type,
    object.confidence.toFixed(2),
    object.status,
    object.scope,
    oneLine(object.statement),
  ]);
  const header = ["ID", "TYPE", "CONFIDENCE", "STATUS", "SCOPE", "STATEMENT"];
  const widths = header
    .slice(0, -1)
    .map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const prefixWidth = widths.reduce((sum, each) => sum + each + 3, 0);
  const statementWidth =
    width === undefined ? Number.POSITIVE_INFINITY : Math.max(minStatementWidth, width - prefixWidth);
  const line = (cells: string[]) =>
    [
      ...cells.slice(0, -1).map((cell, column) => cell.padEnd(widths[column] ?? 0)),
      truncate(cells.at(-1) ?? "", statementWidth),
    ].join("   ");
  const lines = [line(header), ...rows.map(line)];
  if (answer.nextCursor !== null)
    lines.push("", nextPageHint(answer.items.length, answer.total, answer.nextCursor));
  return lines.join("\n");
}

const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

function owner(object: KnowledgeObject): string {
  if (object.scope === "user") return `user (${object.owner.userId ?? "?"}'s)`;
  if (object.scope === "household") return `household (${object.owner.householdId ?? "?"})`;
  return object.scope;
}

function provenance(object: KnowledgeObject): string {
  const { provenance: from } = object;
  return [
    `source ${from.source}`,
    ...(from.channel ? [`channel ${from.channel}`] : []),
    ...(from.sessionId ? [`session ${from.sessionId}`] : []),
    ...(from.agentId ? [`agent ${from.agentId}`] : []),
    ...(from.tool ? [`tool ${from.tool}`] : []),
    `observed ${from.observedAt}`,
    `stored ${from.ingestedAt}`,
  ].join(", ");
}

/** One object in full, as `knowledge show` prints it. */
export function formatKnowledgeItem(item: PersonKnowledgeItem): string {
  const { object } = item;
  const { validity } = object;
  const dimensions = Object.entries(object.dimensions)
    .map(([name, values]) => `${name}=${values.join(",")}`)
    .join("; ");
  const fields: [string, string][] = [
    ["id", object.id],
    ["statement", object.statement],
    ...(object.claim
      ? [
          ["claim", `${object.claim.subject} / ${object.claim.predicate} / ${object.claim.object}`] as [
            string,
            string,
          ],
        ]
      : []),
    ["type", object.type],
    [
      "confidence",
      `${object.confidence.toFixed(2)} (reinforced ${plural(object.reinforcementCount, "time")}, last ${object.lastReinforcedAt}; used ${plural(object.usageCount, "time")})`,
    ],
    ["status", object.status],
    ["scope", owner(object)],
    ["privacy", object.privacy],
    [
      "validity",
      validity.invalidAt === null
        ? `from ${validity.validFrom}`
        : `from ${validity.validFrom} until ${validity.invalidAt}`,
    ],
    ["provenance", provenance(object)],
    ...(object.sessionIds.length > 0 ? [["sessions", object.sessionIds.join(", ")] as [string, string]] : []),
    ["dimensions", dimensions === "" ? "none" : dimensions],
    [
      "links",
      object.links.length === 0
        ? "none"
        : object.links.map((link) => `${link.rel} ${link.targetId}`).join(", "),
    ],
  ];
  for (const other of item.contradictedBy) {
    const replaced = object.links.some((link) => link.rel === "supersededBy" && link.targetId === other.id);
    fields.push([
      replaced ? "replaced by" : "contradicted by",
      `${other.id} ${other.statement === undefined ? "(not yours to see)" : JSON.stringify(other.statement)}`,
    ]);
  }
  fields.push(["created", `${object.createdAt}, updated ${object.updatedAt}`]);
  const labelWidth = Math.max(...fields.map(([label]) => label.length)) + 2;
  return fields.map(([label, value]) => `${`${label}:`.padEnd(labelWidth)}${value}`).join("\n");
}

export function formatCorrected(answer: PersonKnowledgeCorrectResponse): string {
  return [
    `invalidated ${answer.invalidated} (kept for the history)`,
    `created     ${answer.created.id}: ${answer.created.statement}`,
  ].join("\n");
}

/** `knowledgeDeleted 2` → `knowledge deleted 2`; counts that are 0 are left out. */
function formatCounts(counts: Record<string, number>): string {
  const changed = Object.entries(counts)
    .filter(([, count]) => count !== 0)
    .map(([key, count]) => `${key.replace(/[A-Z]/g, (letter) => ` ${letter.toLowerCase()}`)} ${count}`);
  return changed.length === 0 ? "no store changed" : changed.join(", ");
}

export function formatForgotten(answer: PersonKnowledgeForgetResponse): string {
  const again = answer.alreadyForgotten > 0 ? ` (${answer.alreadyForgotten} forgotten before)` : "";
  return [
    `forgot ${plural(answer.forgotten, "object")}${again} at ${answer.forgottenAt} in ${answer.durationMs} ms; audit ${answer.auditId}`,
    formatCounts(answer.counts),
  ].join("\n");
}

export function formatErased(member: string, answer: ErasureAnswer): string {
  return [
    `forgot everything about ${member} at ${answer.erasedAt} in ${answer.durationMs} ms; audit ${answer.auditId}`,
    formatCounts(answer.counts),
    "Nothing of it comes back: what the gateway sends about you from before this moment is refused.",
  ].join("\n");
}

/** What a member's credential comes from, under a 401 or 403 of the app. */
export const credentialHint =
  "A household member's credential comes from a household admin: kubectl remram user add MEMBER -o kubeconfig (with --admin for a member who may see and forget other members' knowledge).";

/**
 * remram-app's refusal ({statusCode, error, message}) in words; `where` is the app's address or pod. A body that is
 * not the app's (a proxy's page) is quoted briefly.
 */
export function appRefusal(status: number, body: string, where: string): string {
  let message: string | undefined;
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed?.message === "string") message = parsed.message;
  } catch {
    // not the app's JSON
  }
  if (message === undefined) {
    const text = oneLine(body);
    return `${where} answered ${status}${text === "" ? "" : `: ${truncate(text, 200)}`} (is it remram-app?)`;
  }
  if (status === 401) return `remram-app did not accept your credential: ${message}\n${credentialHint}`;
  if (status === 403) return `remram-app refused: ${message}\n${credentialHint}`;
  return `remram-app answered ${status}: ${message}`;
}
