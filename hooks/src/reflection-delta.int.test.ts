// REMRAM_TESTBED=opensearch,ollama: the whole knowledge loop for the full reflection delta, through the real OpenClaw
// gateway with this plugin, a real model and the real Cortex. A person's turn is answered with a household fact
// injected; the reflection run is shown that fact as m1 and answers, under the delta's grammar, with a household
// constraint that refines m1, a reinforcement of m1 and the link; Cortex stores all of it.
//
// The reflection model is SmolLM2 under a few-shot template this test creates from the test bed's chat model (the
// approach of hack/ollama/fewshot.Modelfile): greedy decoding copies the examples' answer, so the delta is one this
// test can predict while every part of the path (prompt, grammar, parsing, handle resolution, queue, /reflect,
// OpenSearch) is real. It names m1 and n1 only; whether they resolve depends on what the plugin offered.
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Ollama } from "ollama";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { runDir } from "../../test/harness/src/paths.js";
import {
  chatCompletionRequests,
  completionText,
  promptText,
} from "../../test/harness/src/services/openai-recorder.js";
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

const ollamaEndpoints = testbedEndpoints("ollama");
const opensearch = testbedEndpoints("opensearch");
const ollama = new Ollama({ host: ollamaEndpoints.url });
const reflectionModel = `remram-reflect-delta-${randomBytes(3).toString("hex")}`;
// A SmolLM2 turn through the gateway takes minutes on a busy 2-core box, and a grammar-constrained reflection
// reply of ~60 tokens up to a few more (measured 43 s for this one outside the gateway, under load).
const testTimeoutMs = 900_000;

const bins = "Bins go out on Tuesdays.";
const glass = "Glass goes out on Tuesdays too";
const answer = JSON.stringify({
  items: [{ kind: "constraint", statement: glass, scope: "household" }],
  adjustments: [{ target: "m1", effect: "reinforce" }],
  links: [{ from: "n1", relation: "refines", to: "m1" }],
});
/** Every request gets the same answer, shown three times after that very request (fewshot.Modelfile's trick). */
const template = [
  '{{- $ask := "" }}{{- range .Messages }}{{ if eq .Role "user" }}{{ $ask = .Content }}{{ end }}{{ end -}}',
  "<|im_start|>system\nYou copy the answer.<|im_end|>",
  ...Array.from(
    { length: 3 },
    () => `<|im_start|>user\n{{ $ask }}<|im_end|>\n<|im_start|>assistant\n${answer}<|im_end|>`,
  ),
  "<|im_start|>user\n{{ $ask }}<|im_end|>\n<|im_start|>assistant\n",
].join("\n");

interface StoredObject {
  id: string;
  statement: string;
  scope: string;
  owner: { householdId?: string };
  reinforcementCount: number;
  confidence: number;
  links: { rel: string; targetId: string }[];
}

describe("the full reflection delta through the real gateway, a real model and the real Cortex", () => {
  let cortex: CortexProcess;
  let fixture: PluginGateway;
  let binsId = "";
  let binsBefore: StoredObject | undefined;

  const search = async (query: Record<string, unknown>): Promise<StoredObject[]> => {
    const index = `${cortex.indexPrefix}-knowledge`;
    await fetch(`${opensearch.url}/${index}/_refresh`, { method: "POST" });
    const response = await fetch(`${opensearch.url}/${index}/_search`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ size: 20, query, _source: { excludes: ["embedding"] } }),
    });
    const body = (await response.json()) as { hits: { hits: { _source: StoredObject }[] } };
    return body.hits.hits.map((hit) => hit._source);
  };
  const byStatement = async (phrase: string) => search({ match_phrase: { statement: phrase } });

  beforeAll(async () => {
    await ollama.create({
      model: reflectionModel,
      from: ollamaEndpoints.chatModel,
      template,
      parameters: { temperature: 0, stop: ["<|im_end|>", "<|im_start|>", "<|endoftext|>"] },
    });
    cortex = await cortexProcess({ opensearchUrl: opensearch.url, ollamaUrl: ollamaEndpoints.url });
    await cortex.start();
    const tokenFile = writeCortexTokenFile(`hooks-token-${cortex.indexPrefix}`, cortex.token);
    const seeded = await fetch(`${cortex.url}/ingest`, {
      method: "POST",
      headers: { authorization: `Bearer ${cortex.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        events: [
          {
            kind: "knowledge",
            provenanceKey: "seed-bins",
            scope: "household",
            owner: { householdId: "h1" },
            privacy: "household",
            statement: bins,
            type: "constraint",
            source: "user",
            confidence: 0.6,
          },
        ],
      }),
    });
    expect(seeded.status, await seeded.text()).toBe(200);
    [binsBefore] = await byStatement("Bins go out on Tuesdays");
    binsId = binsBefore?.id ?? "";
    fixture = await startPluginGateway({
      ollama: ollamaEndpoints,
      withTools: false,
      reflectionModel,
      reflectionParams: { temperature: 0 },
      config: ({ metricsPort, queueDir }) => ({
        cortex: { url: cortex.url, tokenFile, retrieveTimeoutMs: 4_000 },
        principals: { householdId: "h1", identities: { "openai-user:alice": "alice" } },
        escalation: { localProviders: [openClawProviderId, reflectionProviderId] },
        queue: { path: queueDir, drainIntervalMs: 250, backoffInitialMs: 250, backoffMaxMs: 2_000 },
        reflection: {
          runTimeoutMs: 300_000,
          model: { provider: reflectionProviderId, model: reflectionModel },
        },
        metrics: { port: metricsPort },
      }),
    });
  }, testTimeoutMs);

  afterAll(async () => {
    await fixture?.stop();
    await cortex?.stop();
    if (cortex !== undefined)
      rmSync(join(runDir, `hooks-token-${cortex.indexPrefix}`), { recursive: true, force: true });
    await ollama.delete({ model: reflectionModel }).catch(() => undefined);
  }, testTimeoutMs);

  it(
    "stores the household item, the reinforcement of what the run was shown, and the link between them",
    async () => {
      expect(binsId).not.toBe("");
      await sendMessage(fixture.gateway.endpoints, {
        text: "When do the bins go out? We put the glass out with them on Tuesdays too.",
        user: "alice",
        timeoutMs: 240_000,
      });
      await waitFor(
        async () =>
          metricValue(
            await readMetrics(fixture.metricsUrl),
            "remram_hooks_reflections_total",
            'outcome="stored"',
          ) > 0
            ? true
            : undefined,
        { what: "the reflection delta stored through /reflect", timeoutMs: 600_000, intervalMs: 1_000 },
      );

      // The reflection run was shown the injected household fact under its handle, after the fenced turn.
      const reflection = chatCompletionRequests(fixture.recorder.requests).find((request) =>
        promptText(request.body).includes("<<<memory"),
      );
      expect(promptText(reflection?.body)).toContain(`m1 (constraint, household): ${bins}`);
      // The model wrote the few-shot answer (what follows is the plugin's and Cortex's doing, not the model's).
      expect(completionText(reflection?.response ?? "")).toBe(answer);

      const [stored] = await byStatement(glass);
      const [after] = await byStatement("Bins go out on Tuesdays");
      expect(stored).toMatchObject({ scope: "household", owner: { householdId: "h1" } });
      expect(stored?.links).toEqual([{ rel: "refines", targetId: binsId }]);
      expect(after?.links).toEqual([{ rel: "refinedBy", targetId: stored?.id }]);
      expect(after?.reinforcementCount).toBe((binsBefore?.reinforcementCount ?? 0) + 1);
      expect(after?.confidence).toBeGreaterThan(binsBefore?.confidence ?? 1);

      const metrics = await readMetrics(fixture.metricsUrl);
      for (const part of ["item_constraint", "household_item", "adjustment_reinforce", "link_refines"])
        expect(
          metricValue(metrics, "remram_hooks_reflection_delta_parts_total", `part="${part}"`),
          part,
        ).toBe(1);
    },
    testTimeoutMs,
  );
});
