import { memoryGetTool, memorySearchTool } from "@remram/contract";
import { z } from "zod";
import type { PluginConfig } from "./config.js";
import type { CortexClient, CortexFailure } from "./cortex-client.js";
import type { ArchiveRecallAnswer, ArchiveSearchAnswer } from "./memory-tools-contract.js";
import { type Counters, increment } from "./metrics.js";
import type { HostAgentTool, ToolContext, ToolResult } from "./openclaw-api.js";
import type { Principal, PrincipalLookup } from "./principal.js";

/**
 * The agent's memory tools, as holder of OpenClaw's memory slot (the built-in memory stays off: Remram is the
 * memory). memory_search returns summaries of archived conversations with their hashes, never documents (seed 004:
 * "search returns top summaries without dereferencing"); memory_get(hash) returns one whole document, and only
 * when Cortex's consent check lets this person have it. Who asks is the session's principal, from the context the
 * gateway gives the tool factory, never from the model's arguments.
 */

export interface MemoryToolDeps {
  config: Pick<PluginConfig, "memoryTools">;
  client: Pick<CortexClient, "archiveSearch" | "archiveRecall">;
  principalOf: PrincipalLookup;
  counters: Counters;
}

const SearchParamsSchema = z.strictObject({
  query: z.string().trim().min(1).max(1_000),
  limit: z.int().min(1).max(50).optional(),
  days: z.int().min(1).max(36_500).optional(),
});

const GetParamsSchema = z.strictObject({
  hash: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-f0-9]{64}$/, "a 64-character SHA-256 hex digest from memory_search"),
});

/** The parameters' JSON Schema, as the model sees them. */
const searchParameters = {
  type: "object",
  properties: {
    query: { type: "string", description: "What to look for in past conversations." },
    limit: { type: "integer", minimum: 1, maximum: 50, description: "How many summaries at most." },
    days: { type: "integer", minimum: 1, description: "Only conversations of the last this many days." },
  },
  required: ["query"],
  additionalProperties: false,
};

const getParameters = {
  type: "object",
  properties: { hash: { type: "string", description: "The hash memory_search gave for a conversation." } },
  required: ["hash"],
  additionalProperties: false,
};

function text(value: string, details: unknown): ToolResult {
  return { content: [{ type: "text", text: value }], details };
}

function invalid(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join(".") || "arguments"}: ${issue.message}`).join("; ");
}

/** Cortex down or slow is an error of the call (the model may say memory is unavailable), never a crash. */
function unavailable(failure: CortexFailure): Error {
  const why = failure.kind === "http" ? `HTTP ${failure.status}` : failure.kind.replace("_", " ");
  return new Error(`Remram memory is unavailable right now (${why}); try again later.`);
}

/** The summaries as the model reads them: newest facts first as Cortex ranked them, each with its hash. */
export function renderSearchResults(results: ArchiveSearchAnswer["results"]): string {
  if (results.length === 0) return "No archived conversation matches.";
  const lines = results.map((result, index) => {
    const full = result.consent.allowRecall ? "memory_get can return it" : "summary only";
    return `${index + 1}. ${result.createdAt.slice(0, 10)} on ${result.sourceChannel} · hash ${result.hash} (${full})\n   ${result.summary}`;
  });
  return [`${results.length} archived conversation(s), summaries only:`, ...lines].join("\n");
}

const speakers: Record<string, string> = {
  user: "User",
  assistant: "Assistant",
  system: "System",
  tool: "Tool",
};

/** A recalled document as text, cut at `maxChars` with a note saying so. */
export function renderDocument(answer: ArchiveRecallAnswer, maxChars: number): string {
  const { document } = answer;
  const heading = `Archived conversation ${answer.hash} (${document.createdAt.slice(0, 10)}, ${document.source.channel}):`;
  const body = document.messages
    .filter((message) => message.content.trim() !== "")
    .map((message) => `${speakers[message.role] ?? message.role}: ${message.content}`)
    .join("\n");
  const full = `${heading}\n${body}`;
  return full.length <= maxChars
    ? full
    : `${full.slice(0, maxChars)}\n[… cut: ${full.length - maxChars} more characters]`;
}

function searchTool(deps: MemoryToolDeps, principal: Principal): HostAgentTool {
  const { config, client, counters } = deps;
  return {
    name: memorySearchTool,
    label: "Memory Search",
    description:
      "Search the person's archived past conversations. Returns summaries with a hash each, never full " +
      "transcripts; pass a hash to memory_get for the whole conversation where the person's consent allows.",
    parameters: searchParameters,
    async execute(_toolCallId, params) {
      const parsed = SearchParamsSchema.safeParse(params);
      if (!parsed.success) throw new Error(invalid(parsed.error));
      const { query, limit, days } = parsed.data;
      const result = await client.archiveSearch(
        {
          principal,
          query,
          limit: Math.min(limit ?? config.memoryTools.maxResults, config.memoryTools.maxResults),
          ...(days === undefined ? {} : { x: { min: -days, max: 0 } }),
        },
        config.memoryTools.timeoutMs,
      );
      if (!result.ok) {
        increment(counters.memoryToolCalls, "search_failed");
        throw unavailable(result.failure);
      }
      increment(counters.memoryToolCalls, "search_ok");
      return text(renderSearchResults(result.value.results), { results: result.value.results });
    },
  };
}

function getTool(deps: MemoryToolDeps, principal: Principal): HostAgentTool {
  const { config, client, counters } = deps;
  return {
    name: memoryGetTool,
    label: "Memory Get",
    description:
      "The whole archived conversation a memory_search hash names, when the person's consent allows it; " +
      "otherwise says why not.",
    parameters: getParameters,
    async execute(_toolCallId, params) {
      const parsed = GetParamsSchema.safeParse(params);
      if (!parsed.success) throw new Error(invalid(parsed.error));
      const { hash } = parsed.data;
      const result = await client.archiveRecall(hash, principal, config.memoryTools.timeoutMs);
      if (result.ok) {
        increment(counters.memoryToolCalls, "get_ok");
        return text(renderDocument(result.value, config.memoryTools.maxDocumentChars), {
          hash,
          recalled: true,
        });
      }
      const { failure } = result;
      // A refusal or a missing document is an answer the model should relay, not a failure of memory.
      if (failure.kind === "http" && (failure.status === 403 || failure.status === 404)) {
        const refused = failure.status === 403;
        increment(counters.memoryToolCalls, refused ? "get_refused" : "get_missing");
        const reason = refused ? refusalReason(failure.body) : notYours;
        return text(`The full conversation is not available: ${reason}.`, { hash, recalled: false, reason });
      }
      increment(counters.memoryToolCalls, "get_failed");
      throw unavailable(failure);
    },
  };
}

const notYours = "no archived conversation of this person has this hash";

/** Cortex's reason, except that a document of someone else's is answered like a missing one: not even its existence. */
function refusalReason(body: string): string {
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === "string" && parsed.message !== "") {
      return parsed.message.includes("owners") ? notYours : parsed.message.slice(0, 300);
    }
  } catch {
    // Not Cortex's JSON error: say no more than that it was refused.
  }
  return "consent does not allow it";
}

/**
 * The tool factory: both tools for a session with a principal, none for one without (a group, a cron run,
 * an anonymous HTTP caller): memory is always someone's.
 */
export function memoryToolsFactory(deps: MemoryToolDeps): (ctx: ToolContext) => HostAgentTool[] | null {
  return (ctx) => {
    const principal = deps.principalOf(ctx);
    if (!principal.ok) return null;
    return [searchTool(deps, principal.principal), getTool(deps, principal.principal)];
  };
}
