import { describe, expect, it } from "vitest";
import { parsePluginConfig } from "./config.js";
import { createCortexClient } from "./cortex-client.js";
import { memoryToolsFactory, renderDocument, renderSearchResults } from "./memory-tools.js";
import { emptyCounters } from "./metrics.js";
import { derivePrincipal } from "./principal.js";

const hash = "3f".repeat(32);
const config = parsePluginConfig({
  principals: { identities: { "openai-user:alice": "alice" } },
  memoryTools: { maxResults: 5, maxDocumentChars: 2_000 },
});
const aliceCtx = { sessionKey: "agent:main:openai-user:alice", agentId: "main" };

/** A Cortex answering from a table, recording what the tools asked. */
function fakeCortex(answers: Record<string, { status: number; body: unknown }>) {
  const calls: { method: string; url: string; body?: unknown }[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    const url = String(input);
    calls.push({
      method: init?.method ?? "GET",
      url,
      ...(typeof init?.body === "string" ? { body: JSON.parse(init.body) } : {}),
    });
    const key = Object.keys(answers).find((path) => new URL(url).pathname === path);
    const answer = key === undefined ? { status: 500, body: { message: "unexpected" } } : answers[key];
    return new Response(JSON.stringify(answer?.body), { status: answer?.status ?? 500 });
  };
  return { calls, client: createCortexClient(config.cortex, fetchImpl) };
}

function toolsFor(answers: Record<string, { status: number; body: unknown }>, ctx = aliceCtx) {
  const cortex = fakeCortex(answers);
  const counters = emptyCounters();
  const tools = memoryToolsFactory({
    config,
    client: cortex.client,
    principalOf: (context) => derivePrincipal(context, config.principals),
    counters,
  })(ctx);
  return { tools, cortex, counters };
}

const hit = {
  hash,
  summary: "Conversation on telegram, 2026-05-01: planning the allotment",
  coordinates: { x: -3, y: 8, z: 0 },
  clusterId: null,
  decayScore: 0.9,
  reinforcementCount: 0,
  consent: { privacy: "private", allowRecall: true },
  sourceSession: "s1",
  sourceChannel: "telegram",
  createdAt: "2026-05-01T09:00:00.000Z",
};

describe("memory_search", () => {
  it("asks Cortex for the session principal's summaries, within the configured count, and lists hashes", async () => {
    const { tools, cortex, counters } = toolsFor({
      "/archive/search": { status: 200, body: { results: [hit] } },
    });
    const search = tools?.find((tool) => tool.name === "memory_search");
    const result = await search?.execute("call-1", { query: "allotment", limit: 50, days: 30 });
    expect(cortex.calls[0]?.body).toEqual({
      principal: { userId: "alice", agentId: "main" },
      query: "allotment",
      limit: 5,
      x: { min: -30, max: 0 },
    });
    const text = result?.content[0]?.text ?? "";
    expect(text).toContain(hash);
    expect(text).toContain("planning the allotment");
    expect(text).toContain("memory_get can return it");
    expect(counters.memoryToolCalls).toEqual({ search_ok: 1 });
  });

  it("refuses bad arguments and reports Cortex being down as an error, never a crash of the gateway", async () => {
    const { tools } = toolsFor({ "/archive/search": { status: 503, body: { message: "down" } } });
    const search = tools?.find((tool) => tool.name === "memory_search");
    await expect(search?.execute("c", { query: "" })).rejects.toThrow(/query/);
    await expect(search?.execute("c", { query: "x", userId: "bob" })).rejects.toThrow();
    await expect(search?.execute("c", { query: "x" })).rejects.toThrow(/unavailable.*HTTP 503/);
  });
});

describe("memory_get", () => {
  const document = {
    createdAt: "2026-05-01T09:00:00.000Z",
    source: { sessionId: "s1", channel: "telegram" },
    messages: [
      { role: "user", content: "Where do the rhubarb crowns go?" },
      { role: "assistant", content: "Beside the compost heap." },
    ],
    attachments: [],
    tags: [],
    consentScope: { ownerIds: ["alice"], privacy: "private", allowRecall: true },
  };

  it("returns the whole document for its owner, asking with the session's principal", async () => {
    const { tools, cortex } = toolsFor({ [`/archive/${hash}`]: { status: 200, body: { hash, document } } });
    const get = tools?.find((tool) => tool.name === "memory_get");
    const result = await get?.execute("c", { hash: hash.toUpperCase() });
    expect(cortex.calls[0]).toMatchObject({ method: "GET" });
    expect(cortex.calls[0]?.url).toContain(`/archive/${hash}?userId=alice&agentId=main`);
    expect(result?.content[0]?.text).toBe(
      `Archived conversation ${hash} (2026-05-01, telegram):\nUser: Where do the rhubarb crowns go?\nAssistant: Beside the compost heap.`,
    );
  });

  it("relays a consent refusal, and answers another person's document like a missing one", async () => {
    const refused = toolsFor({
      [`/archive/${hash}`]: {
        status: 403,
        body: { message: "consent does not allow recall of the full document" },
      },
    });
    const text = (await refused.tools?.[1]?.execute("c", { hash }))?.content[0]?.text;
    expect(text).toBe(
      "The full conversation is not available: consent does not allow recall of the full document.",
    );
    const foreign = toolsFor({
      [`/archive/${hash}`]: {
        status: 403,
        body: { message: "the principal is not among the document's owners" },
      },
    });
    const foreignText = (await foreign.tools?.[1]?.execute("c", { hash }))?.content[0]?.text ?? "";
    expect(foreignText).toContain("no archived conversation of this person has this hash");
    expect(foreignText).not.toContain("owners");
    expect(foreign.counters.memoryToolCalls).toEqual({ get_refused: 1 });
  });

  it("takes a hash only, and the model cannot name another person", async () => {
    const { tools, cortex } = toolsFor({});
    await expect(tools?.[1]?.execute("c", { hash: "../etc/passwd" })).rejects.toThrow(/SHA-256/);
    await expect(tools?.[1]?.execute("c", { hash, userId: "bob" })).rejects.toThrow();
    expect(cortex.calls).toEqual([]);
  });
});

describe("the tool factory and rendering", () => {
  it("offers no memory tools to a session without a single person (group, cron, anonymous)", () => {
    for (const sessionKey of [
      "agent:main:telegram:group:1",
      "agent:main:cron:job",
      "agent:main:openai:abc",
    ]) {
      expect(toolsFor({}, { sessionKey, agentId: "main" }).tools).toBeNull();
    }
  });

  it("renders an empty search plainly and cuts a long document with a note", () => {
    expect(renderSearchResults([])).toBe("No archived conversation matches.");
    const long = renderDocument(
      {
        hash,
        document: {
          createdAt: "2026-05-01T09:00:00.000Z",
          source: { channel: "telegram" },
          messages: [{ role: "user", content: "y".repeat(5_000) }],
        },
      },
      1_000,
    );
    expect(long.length).toBeLessThan(1_100);
    expect(long).toMatch(/\[… cut: \d+ more characters\]$/);
  });
});
