// Cortex's own schemas, strictly: the hooks read Cortex's answers leniently (cortex-contract.ts, derived from the
// same schemas), so this test proves that what the hooks send, Cortex accepts, and what Cortex answers, they read.
import {
  ingestRequest,
  ingestResponse,
  reflectRequest,
  retrieveRequest,
  retrieveResponse,
} from "@remram/contract";
import { describe, expect, it } from "vitest";
import { captureToolResult } from "./capture.js";
import { parsePluginConfig } from "./config.js";
import { createCortexClient } from "./cortex-client.js";
import { RetrieveResponseSchema } from "./cortex-contract.js";
import { cortexRetriever } from "./hooks/retrieve.js";
import { blocksCloud } from "./injection.js";
import { emptyCounters } from "./metrics.js";
import { derivePrincipal } from "./principal.js";
import { toCortexDelta } from "./reflection.js";

const config = parsePluginConfig({ principals: { householdId: "home" } });
const derived = derivePrincipal({ sessionKey: "agent:main:telegram:direct:Ærlig Navn" }, config.principals);
if (!derived.ok) throw new Error("expected a principal");
const principal = derived.principal;

describe("the hooks' side of the Cortex contract", () => {
  it("sends /retrieve requests Cortex accepts, even for peer ids Cortex would not", () => {
    const request = { principal, requestText: "what do I like?", tokenBudget: 1200, mode: "standard" };
    expect(retrieveRequest.safeParse(request).success).toBe(true);
  });

  it("sends the run's model location with every /retrieve, as Cortex reads it", async () => {
    const bodies: unknown[] = [];
    const fakeFetch: typeof fetch = async (_url, init) => {
      bodies.push(JSON.parse(String(init?.body)));
      return new Response("{}", { status: 200 });
    };
    const client = createCortexClient(config.cortex, fakeFetch);
    const retrieve = cortexRetriever(client, config.injection, emptyCounters().retrieveLatency);
    await retrieve(principal, "what do I like?", "local");
    await retrieve(principal, "what do I like?", "cloud");
    const sent = bodies.map((body) => retrieveRequest.parse(body).modelLocation);
    expect(sent).toEqual(["local", "cloud"]);
  });

  it("sends the live-state intent it detects, and the operator's consent to private items in the cloud", async () => {
    const bodies: unknown[] = [];
    const fakeFetch: typeof fetch = async (_url, init) => {
      bodies.push(JSON.parse(String(init?.body)));
      return new Response("{}", { status: 200 });
    };
    const client = createCortexClient(config.cortex, fakeFetch);
    const latency = emptyCounters().retrieveLatency;
    await cortexRetriever(client, config.injection, latency)(principal, "is the NAS up?", "cloud");
    await cortexRetriever(client, config.injection, latency, true)(principal, "what do I like?", "cloud");
    const [live, plain] = bodies.map((body) => retrieveRequest.parse(body));
    expect(live).toMatchObject({ intent: "live_state", allowPrivateToCloud: false });
    expect(plain).toMatchObject({ allowPrivateToCloud: true });
    expect(plain?.intent).toBeUndefined();
    // Left out when false: a Cortex from before the field would refuse the request.
    expect(bodies[0]).not.toHaveProperty("allowPrivateToCloud");
  });

  it("queues tool results as /ingest events Cortex accepts", () => {
    const captured = captureToolResult(
      {
        message: {
          role: "toolResult",
          toolCallId: "call_9",
          toolName: "read",
          content: [{ type: "text", text: "contents" }],
          details: { bytes: 8 },
          isError: false,
          timestamp: Date.now(),
        },
      },
      {},
      principal,
      "agent:main:telegram:direct:Ærlig Navn",
      config.capture,
      new Date(),
    );
    if (!captured.ok) throw new Error("expected a capture");
    const parsed = ingestRequest.safeParse({ events: [captured.item] });
    expect(parsed.error?.issues ?? []).toEqual([]);
  });

  it("posts reflection deltas Cortex's /reflect schema accepts, every kind of part included", () => {
    const delta = toCortexDelta(
      {
        items: [
          { kind: "fact", statement: "Lives in Bergen", confidence: 0.8 },
          { kind: "correction", statement: "Not in Oslo" },
          {
            kind: "constraint",
            statement: "No deploys on Fridays",
            claim: { subject: "deploys", predicate: "forbidden on", object: "Friday" },
            scope: "household",
          },
          { kind: "preference", statement: "Coffee, black", updates: "m2" },
        ],
        adjustments: [{ target: "m1", effect: "reinforce" }],
        links: [
          { from: "n3", relation: "refines", to: "m1" },
          { from: "n4", relation: "related", to: "n1" },
        ],
        candidateDimensions: [{ name: "city", value: "Bergen" }],
      },
      {
        jobId: "j",
        runId: "r",
        principal,
        sessionKey: "agent:main:telegram:direct:Ærlig Navn",
        interaction: "User: hi",
        targets: [
          { id: "k-1", statement: "Deploys wait for Monday", type: "constraint", scope: "household" },
          { id: "k-2", statement: "Takes tea", type: "preference", scope: "user" },
        ],
        createdAt: new Date().toISOString(),
      },
    );
    expect(delta.items).toHaveLength(2);
    expect(delta.corrections).toHaveLength(2);
    expect(delta.confidenceAdjustments).toHaveLength(1);
    expect(delta.links).toHaveLength(2);
    const parsed = reflectRequest.safeParse({ ...delta, principal });
    expect(parsed.error?.issues ?? []).toEqual([]);
  });

  it("reads a full Cortex /retrieve answer, and its ingest answer has the fields the drain logs", () => {
    const answer = retrieveResponse.parse({
      bundle: { text: "x", tokens: 1, tokenBudget: 100, sections: [] },
      facts: [
        {
          id: "f",
          statement: "Likes tea",
          type: "preference",
          confidence: 0.7,
          score: 1,
          dimensions: {},
          scope: "household",
          privacy: "household",
        },
      ],
      chunks: [
        {
          id: "c",
          level: "L2",
          sourceId: "s",
          sourceKind: "turn",
          text: "t",
          score: 1,
          expandedFrom: null,
          scope: "user",
          privacy: "private",
        },
      ],
      artifactRefs: [{ sourceId: "a", path: null, title: null }],
      aggregateConfidence: 0.7,
      lowConfidence: false,
      degraded: false,
      degradedReasons: [],
      liveState: { detected: true, reason: "now" },
      candidatesConsidered: 2,
    });
    const read = RetrieveResponseSchema.parse(answer);
    expect(read.bundle).toMatchObject({ text: "x", tokens: 1 });
    expect(read.facts[0]).toMatchObject({ id: "f", statement: "Likes tea", type: "preference" });
    // Cortex reports each item's scope and privacy: the household fact may reach a cloud model, the chunk not.
    expect(blocksCloud({ ...read, chunks: [] }, false)).toBe(false);
    expect(blocksCloud(read, false)).toBe(true);
    expect(read.liveState.detected).toBe(true);
    expect(ingestResponse.shape).toHaveProperty("created");
  });
});
