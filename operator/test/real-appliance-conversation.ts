// A conversation with the appliance on real pods, through the gateway's Service as a channel or client on the box
// reaches it: SmolLM2 answers from the Ollama pod, the hooks plugin asks the Cortex pod for the person's knowledge
// and reflects on the finished turn in a background run of its own.
import { describe, expect, it } from "vitest";
import { metricValue } from "../../hooks/src/testing/gateway-fixture.js";
import { replyText } from "../../test/harness/src/services/openclaw.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { cortexApi, gatewayAccess, hooksMetrics, kubectl, measured, namespace } from "./real-appliance.js";

/** The gateway's session key for an HTTP client naming `user` is `openai-user:<user>`; the plugin's user id too. */
export const person = { user: "alice", userId: "openai-user:alice" };
/** Put into Cortex for the person; later suites check it survives upgrades and restarts. */
export const knownStatement = "Alice's sister Ingrid lives in Bergen and visits every June.";

const turnTimeoutMs = 300_000;

/** One turn through the gateway's OpenAI-compatible endpoint; returns the reply and how long it took. */
export async function say(text: string): Promise<{ reply: string; ms: number }> {
  const { url, token } = await gatewayAccess();
  const started = Date.now();
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "openclaw",
      user: person.user,
      messages: [{ role: "user", content: text }],
    }),
    signal: AbortSignal.timeout(turnTimeoutMs),
  });
  const body = await response.text();
  if (!response.ok) throw new Error(`the gateway answered ${response.status}: ${body}`);
  return { reply: replyText(JSON.parse(body)), ms: Date.now() - started };
}

/** What Cortex hands the plugin for the person and `question` (the bundle the gateway would inject). */
export async function recall(question: string): Promise<string> {
  return JSON.stringify(
    await cortexApi("POST", "/retrieve", {
      principal: { userId: person.userId, agentId: "main" },
      requestText: question,
      tokenBudget: 1024,
    }),
  );
}

export function describeConversation(): void {
  describe("a conversation through the gateway's Service", () => {
    it(
      "answers a person, asks Cortex for their knowledge, and stores a reflection of the turn",
      async () => {
        const first = await say("Hello! I am planning a trip to Norway next summer.");
        expect(first.reply.trim()).not.toBe("");
        measured.firstReplyMs = first.ms;
        const text = await waitFor(
          async () => {
            const metrics = await hooksMetrics();
            if (metricValue(metrics, "remram_hooks_reflections_total", 'outcome="stored"') > 0)
              return metrics;
            // Thrown, so a timeout names how far the reflection got.
            throw new Error(
              metrics
                .split("\n")
                .filter((line) => /^remram_hooks_(reflections|reflect|queue)/.test(line))
                .join("; "),
            );
          },
          { what: "the turn's reflection stored in Cortex", timeoutMs: 300_000, intervalMs: 5_000 },
        ).catch(async (error: unknown) => {
          const log = await kubectl(["-n", namespace, "logs", "deployment/moltbox-gateway", "-c", "gateway"]);
          const lines = log.split("\n").filter((line) => /reflect/i.test(line));
          throw new Error(`${String(error)}\ngateway log, reflection lines:\n${lines.slice(-20).join("\n")}`);
        });
        // The retrieval reached Cortex (NetworkPolicy, Service, token) and did not fail.
        expect(metricValue(text, "remram_hooks_retrieve_duration_seconds_count")).toBeGreaterThanOrEqual(1);
        expect(metricValue(text, "remram_hooks_retrieve_errors_total")).toBe(0);
        expect(
          metricValue(text, "remram_hooks_reflections_total", 'outcome="skipped_own_run"'),
        ).toBeGreaterThan(0);
      },
      turnTimeoutMs * 2,
    );

    it(
      "injects what Cortex knows about the person into a later run",
      async () => {
        await cortexApi("POST", "/ingest", {
          events: [
            {
              kind: "knowledge",
              provenanceKey: "real-node-alice-sister",
              scope: "user",
              owner: { userId: person.userId },
              privacy: "private",
              statement: knownStatement,
              type: "fact",
              source: "user",
              confidence: 0.9,
            },
          ],
        });
        expect(await recall("Where does my sister Ingrid live?")).toContain(knownStatement);
        const before = metricValue(await hooksMetrics(), "remram_hooks_injections_total");
        const { reply } = await say("Where does my sister Ingrid live?");
        expect(reply.trim()).not.toBe("");
        const after = await hooksMetrics();
        expect(metricValue(after, "remram_hooks_injections_total")).toBe(before + 1);
        // Ollama in the pod is local: a private item may go into its prompt.
        expect(metricValue(after, "remram_hooks_private_items_withheld_total")).toBe(0);
      },
      turnTimeoutMs,
    );
  });
}
