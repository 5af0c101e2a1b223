import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bundleClose, bundleLiveStateNote, bundleOpen, bundlePreamble } from "@remram/contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { runDir } from "../../test/harness/src/paths.js";
import { chatCompletionRequests, promptText } from "../../test/harness/src/services/openai-recorder.js";
import { openClawProviderId, sendMessage } from "../../test/harness/src/services/openclaw.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { type CortexProcess, cortexProcess } from "./testing/cortex-process.js";
import {
  metricValue,
  type PluginGateway,
  readMetrics,
  reflectionProviderId,
  startPluginGateway,
  writeCortexTokenFile,
} from "./testing/gateway-fixture.js";

// REMRAM_TESTBED=opensearch,ollama. Security issue 15, finding 6: what the plugin injects must never be stored
// again, whatever delimiter (if any) it comes back in. The real gateway injects Alice's fact, then the fact comes
// back through every path the plugin captures; Cortex's indices are read directly for a second copy.
const ollama = testbedEndpoints("ollama");
const opensearch = testbedEndpoints("opensearch");
const reflectionMarker = "You extract durable knowledge";
const fact = "Alice's cat is called Miso.";
const question = "What is my cat called?";
// Every scripted run ends with this reply (the relay writes it, not SmolLM2): a model quoting the fact verbatim.
const echoReply = `Noted. From what I remember, ${fact}`;
const turnTimeoutMs = 240_000;
const testTimeoutMs = 600_000;

describe("adversarial: injected content", () => {
  let cortex: CortexProcess;
  let fixture: PluginGateway;
  let baseline: string[];

  const cortexPost = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${cortex.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${cortex.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`Cortex ${path} answered ${response.status}: ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  /** One of Alice's private facts, stored directly as a user-sourced knowledge event. */
  const seedFact = (provenanceKey: string, statement: string, confidence: number) =>
    cortexPost("/ingest", {
      events: [
        {
          kind: "knowledge",
          provenanceKey,
          scope: "user",
          owner: { userId: "alice" },
          privacy: "private",
          statement,
          type: "fact",
          source: "user",
          confidence,
        },
      ],
    });
  /** Every document in any of this Cortex's indices whose stored source mentions `needle`, as index/id. */
  const storedWith = async (needle: string): Promise<string[]> => {
    const indices = `${opensearch.url}/${cortex.indexPrefix}-*`;
    await fetch(`${indices}/_refresh`, { method: "POST" });
    const response = await fetch(`${indices}/_search?size=10000`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: { match_all: {} } }),
    });
    const { hits } = (await response.json()) as {
      hits: { hits: { _index: string; _id: string; _source: unknown }[] };
    };
    return hits.hits
      .filter((hit) => JSON.stringify(hit._source).toLowerCase().includes(needle.toLowerCase()))
      .map((hit) => `${hit._index}/${hit._id}`)
      .sort();
  };
  const stored = async (needle: string): Promise<string[] | undefined> => {
    const found = await storedWith(needle);
    return found.length > 0 ? found : undefined;
  };
  const metrics = () => readMetrics(fixture.metricsUrl);
  const workspaceFile = (name: string, content: string) =>
    writeFileSync(join(fixture.gateway.endpoints.home, "workspace", name), content);
  /** One run of Alice's: the relay issues the read call, the gateway runs it, the relay writes the echo reply. */
  const readAs = (text: string, file: string) =>
    sendMessage(fixture.gateway.endpoints, {
      text: `${text} [[tool:read {"path":"${file}"}]]`,
      user: "alice",
      timeoutMs: turnTimeoutMs,
    });
  /** The precondition of every case: the model of that run really was shown the fact in the block. */
  const expectInjected = (marker: string) => {
    const prompts = chatCompletionRequests(fixture.recorder.requests)
      .map((request) => promptText(request.body))
      .filter((prompt) => prompt.includes(marker) && !prompt.includes(reflectionMarker));
    expect(prompts.length).toBeGreaterThan(0);
    for (const prompt of prompts) {
      expect(prompt).toContain(bundleOpen);
      expect(prompt).toContain(fact);
    }
  };

  beforeAll(async () => {
    cortex = await cortexProcess({ opensearchUrl: opensearch.url, ollamaUrl: ollama.url });
    await cortex.start();
    const tokenFile = writeCortexTokenFile(`hooks-token-${cortex.indexPrefix}`, cortex.token);
    await seedFact("seed-alice-cat", fact, 0.9);
    baseline = await waitFor(() => stored("miso"), { what: "the seeded fact", timeoutMs: 30_000 });
    fixture = await startPluginGateway({
      ollama,
      withTools: true,
      replyAfterScriptedTool: echoReply,
      config: ({ metricsPort, queueDir }) => ({
        cortex: { url: cortex.url, tokenFile, retrieveTimeoutMs: 4_000 },
        principals: { identities: { "openai-user:alice": "alice" } },
        escalation: { localProviders: [openClawProviderId] },
        queue: { path: queueDir, drainIntervalMs: 250, backoffInitialMs: 250, backoffMaxMs: 2_000 },
        reflection: {
          runTimeoutMs: 120_000,
          model: { provider: reflectionProviderId, model: ollama.chatModel },
        },
        metrics: { port: metricsPort },
      }),
    });
    console.log(`gateway log: ${fixture.gateway.processes[0]?.logFile}; Cortex at ${cortex.url}`);
  }, testTimeoutMs);

  afterAll(async () => {
    await fixture?.stop();
    await cortex?.stop();
    if (cortex !== undefined)
      rmSync(join(runDir, `hooks-token-${cortex.indexPrefix}`), { recursive: true, force: true });
  }, testTimeoutMs);

  it(
    "a tool result holding the block verbatim, as Cortex renders it, stores no second copy",
    async () => {
      const answer = await cortexPost("/retrieve", {
        principal: { userId: "alice", agentId: "main" },
        requestText: question,
        tokenBudget: 1_200,
        modelLocation: "local",
      });
      const rendered = String((answer.bundle as { text?: unknown }).text);
      expect(rendered.startsWith(`${bundleOpen}\n`)).toBe(true);
      expect(rendered).toContain(fact);
      workspaceFile("SAVED.md", `${rendered}\nThe shed door sticks in winter.\n`);
      await readAs(`${question} Read SAVED.md.`, "SAVED.md");
      expectInjected("Read SAVED.md.");
      await waitFor(() => stored("shed door"), {
        what: "the tool result in Cortex",
        timeoutMs: 60_000,
        intervalMs: 500,
      });
      expect(await storedWith("miso")).toEqual(baseline);
      expect(
        metricValue(await metrics(), "remram_hooks_injected_content_stripped_total", 'where="tool_result"'),
      ).toBeGreaterThan(0);
    },
    testTimeoutMs,
  );

  it(
    "a tool result echoing the block under a delimiter a model paraphrased stores no second copy",
    async () => {
      workspaceFile(
        "PASTED.md",
        [
          "[[ Remram memory ]]",
          "Facts:",
          "* alice’s cat is called Miso",
          "[[ /Remram memory ]]",
          "The garden gate squeaks since May.",
        ].join("\n"),
      );
      await readAs(`${question} Read PASTED.md.`, "PASTED.md");
      expectInjected("Read PASTED.md.");
      await waitFor(() => stored("gate squeaks"), {
        what: "the tool result in Cortex",
        timeoutMs: 60_000,
        intervalMs: 500,
      });
      expect(await storedWith("miso")).toEqual(baseline);
    },
    testTimeoutMs,
  );

  it(
    "a user message and a model reply that quote the injected fact are not reflected into a second copy",
    async () => {
      workspaceFile("GARAGE.md", "The garage opener battery is a CR2032.\n");
      const userEcho = [
        "Earlier you showed me this:",
        "<< REMRAM KNOWLEDGE >>",
        `- ${fact}`,
        "<< END REMRAM KNOWLEDGE >>",
        `So ${fact} Also, I bought a red kayak. Read GARAGE.md.`,
      ].join("\n");
      const reply = await readAs(userEcho, "GARAGE.md");
      expect(reply).toContain(fact);
      expectInjected("I bought a red kayak.");
      // The reflection run reads the turn: the user's words and the reply, without what was injected.
      const reflectionPrompt = await waitFor(
        async () =>
          chatCompletionRequests(fixture.recorder.requests)
            .map((request) => promptText(request.body))
            .find((prompt) => prompt.includes(reflectionMarker) && prompt.includes("red kayak")),
        { what: "the reflection run of the echoing turn", timeoutMs: 420_000, intervalMs: 1_000 },
      );
      // The turn itself (fenced <<<turn … turn>>>) holds none of it; the shown objects follow it on purpose, fenced
      // <<<memory … memory>>>, so the reflection can act on them by id (reflection-targets.ts).
      const turn = reflectionPrompt.slice(
        reflectionPrompt.lastIndexOf("<<<turn"),
        reflectionPrompt.lastIndexOf("turn>>>"),
      );
      expect(turn).toContain("I bought a red kayak.");
      expect(turn).not.toMatch(/miso/i);
      expect(turn).toContain("Noted. From what I remember,");
      // Every queued reflection has finished and its delta (if any) reached Cortex.
      await waitFor(
        async () => {
          const text = await metrics();
          const finished = ["extracted", "invalid_delta", "gave_up"]
            .map((outcome) => metricValue(text, "remram_hooks_reflections_total", `outcome="${outcome}"`))
            .reduce((sum, value) => sum + value, 0);
          const pending = metricValue(text, "remram_hooks_queue_depth", 'queue="reflect"');
          return finished >= metricValue(text, "remram_hooks_reflections_enqueued_total") && pending === 0
            ? true
            : undefined;
        },
        { what: "every reflection to finish", timeoutMs: 420_000, intervalMs: 1_000 },
      );
      expect(await storedWith("miso")).toEqual(baseline);
    },
    testTimeoutMs,
  );

  it(
    "Cortex itself drops a block in the hooks' delimiter from a client that sends it unstripped",
    async () => {
      const block = `${bundleOpen}\n## facts\n- ${fact} (confidence 0.90)\n${bundleClose}`;
      await cortexPost("/ingest", {
        events: [
          {
            kind: "tool_result",
            provenanceKey: "unstripped-client",
            sessionId: "old-hooks-session",
            agentId: "main",
            observedAt: new Date().toISOString(),
            scope: "user",
            owner: { userId: "alice" },
            tool: "read",
            output: `${block}\nThe porch light runs on a timer.`,
          },
        ],
      });
      const porch = await waitFor(() => stored("porch light"), {
        what: "the event in Cortex",
        timeoutMs: 30_000,
      });
      const miso = await storedWith("miso");
      expect(porch.filter((id) => miso.includes(id))).toEqual([]);
    },
    testTimeoutMs,
  );

  it(
    "a live-state question gets Cortex's block as dated history under a live-check instruction",
    async () => {
      // A fact of its own: the reflections of the runs above may have reinforced or weakened Miso (they are shown
      // the injected objects by id, and the model's choice varies), and this case is about the dating, not them.
      const catFact = "Alice's cat sleeps in the laundry basket.";
      await seedFact("seed-alice-cat-basket", catFact, 0.8);
      await waitFor(() => stored("laundry basket"), { what: "the second seeded fact", timeoutMs: 30_000 });
      workspaceFile("FLAP.md", "The cat flap was fixed on Monday.\n");
      const liveQuestion = "Is my cat at home right now? Read FLAP.md.";
      await readAs(liveQuestion, "FLAP.md");
      const prompt = chatCompletionRequests(fixture.recorder.requests)
        .map((request) => promptText(request.body))
        .filter((text) => text.includes(liveQuestion) && !text.includes(reflectionMarker))
        .at(0);
      if (prompt === undefined) throw new Error("the model never received the live-state question");
      // The block the plugin injected, in the system prompt before the transcript (which holds earlier tool
      // results quoting blocks): Cortex's framing, the live-check instruction, and the fact seeded above dated by
      // the day Cortex learned it (seed 001: LIVE > RAW > DERIVED).
      const start = prompt.indexOf(bundleOpen);
      const end = prompt.indexOf(bundleClose, start);
      expect(start).toBeGreaterThanOrEqual(0);
      expect(end).toBeLessThan(prompt.indexOf(liveQuestion));
      const block = prompt.slice(start, end + bundleClose.length);
      expect(block.split(bundleOpen)).toHaveLength(2);
      const lines = block.split("\n");
      expect(lines.slice(0, 1 + bundlePreamble.length + bundleLiveStateNote.length)).toEqual([
        bundleOpen,
        ...bundlePreamble,
        ...bundleLiveStateNote,
      ]);
      expect(block).toMatch(
        new RegExp(
          `\\n- ${catFact.replace(/[.]/g, "\\.")} \\(confidence 0\\.80; learned \\d{4}-\\d{2}-\\d{2}\\)\\n`,
        ),
      );
    },
    testTimeoutMs,
  );
});
