// A conversation with the appliance on real pods, through the gateway's Service as a channel or client on the box
// reaches it. A person asks the `reader` agent to remember something (on the few-shot SmolLM2, which acknowledges it);
// the hooks plugin saves it in the Cortex pod at once (an explicit save), asks Cortex for the person's knowledge, and
// reflects on the finished turn in a background run of its own; a later run of the main agent (SmolLM2 from the
// Ollama pod) gets it back.
import { describe, expect, it } from "vitest";
import { metricValue } from "../../hooks/src/testing/gateway-fixture.js";
import { replyText } from "../../test/harness/src/services/openclaw.js";
import { waitFor } from "../../test/harness/src/wait.js";
import {
  cortexApi,
  gatewayAccess,
  hooksDiagnostics,
  hooksMetrics,
  kubectl,
  measured,
  namespace,
  nightlySchedule,
} from "./real-appliance.js";

/** The gateway's session key for an HTTP client naming `user` is `openai-user:<user>`; the plugin's user id too. */
export const person = { user: "alice", userId: "openai-user:alice" };
/** What the person tells the assistant; its reflection is what later runs get back. */
const toldStatement = "Please remember that my sister Ingrid lives in Bergen and visits every June.";
/** The part of the reflected fact later checks look for (the model words the statement itself). */
export const knownFact = "Ingrid lives in Bergen";
export const knownFactQuestion = "Where does my sister Ingrid live?";

export const turnTimeoutMs = 300_000;

/**
 * One turn of `user` (the person by default) through the gateway's OpenAI-compatible endpoint with `agent` (named:
 * with several agents OpenClaw refuses a client that names none); returns the reply and how long it took. Turns that
 * only need an answer name a user of their own: a fresh session's prompt is the agent's (which the model server
 * keeps cached) and one line, where the person's long session would be read again after every change.
 */
export async function say(
  text: string,
  agent = "main",
  user = person.user,
): Promise<{ reply: string; ms: number }> {
  const { url, token } = await gatewayAccess();
  const started = Date.now();
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: `openclaw/${agent}`,
      user,
      messages: [{ role: "user", content: text }],
    }),
    signal: AbortSignal.timeout(turnTimeoutMs),
  });
  const body = await response.text();
  if (!response.ok) {
    // The pod's own account of the failure: its log goes with the node when the run ends.
    const log = await kubectl(["-n", namespace, "logs", "deployment/moltbox-gateway", "--tail=60"]).catch(
      String,
    );
    throw new Error(`the gateway answered ${response.status}: ${body}\ngateway log (last 60 lines):\n${log}`);
  }
  return { reply: replyText(JSON.parse(body)), ms: Date.now() - started };
}

/** What Cortex hands the plugin for the person, `agent` and `question` (the bundle the gateway would inject). */
export async function recall(question: string, agent = "main"): Promise<string> {
  return JSON.stringify(
    await cortexApi("POST", "/retrieve", {
      principal: { userId: person.userId, agentId: agent },
      requestText: question,
      tokenBudget: 1024,
    }),
  );
}

export function describeConversation(): void {
  describe("a conversation through the gateway's Service", () => {
    it(
      "answers a person, asks Cortex for their knowledge, and saves what they asked it to remember once",
      async () => {
        // The household's DreamSchedule (the example manifest's): it mirrors pending proposals every 10 s.
        await kubectl(["apply", "-f", "-"], JSON.stringify(nightlySchedule));
        const saidAt = Date.now();
        const first = await say(toldStatement, "reader");
        expect(first.reply.trim()).toBe("Noted.");
        // The save proposed its page at once; the in-cluster operator mirrors it for a person to approve.
        await waitFor(
          async () => {
            const json = await kubectl(["-n", namespace, "get", "artifactproposals", "-o", "json"]);
            const items = (JSON.parse(json) as { items: { spec: { diff: string } }[] }).items;
            return items.some((item) => item.spec.diff.includes("Ingrid")) ? true : undefined;
          },
          { what: "the explicit save's page proposal mirrored", timeoutMs: 120_000, intervalMs: 500 },
        );
        measured.explicitSaveToProposalMs = Date.now() - saidAt;
        // The saved statement is registered as already stored: the turn's reflection input holds only "Please
        // remember that", which the plugin's gate keeps from a model run (a second copy would be a duplicate).
        const text = await waitFor(
          async () => {
            const metrics = await hooksMetrics();
            return metricValue(metrics, "remram_hooks_reflections_total", 'outcome="skipped_request"') > 0
              ? metrics
              : undefined;
          },
          { what: "the turn's reflection decided", timeoutMs: 300_000, intervalMs: 5_000 },
        ).catch(async (error: unknown) => {
          // How far the turn got: the plugin's counters (queue depths included) and hook log.
          throw new Error(`${String(error)}\n${await hooksDiagnostics()}`);
        });
        // The retrieval reached Cortex (NetworkPolicy, Service, token) and did not fail.
        expect(metricValue(text, "remram_hooks_retrieve_duration_seconds_count")).toBeGreaterThanOrEqual(1);
        expect(metricValue(text, "remram_hooks_retrieve_errors_total")).toBe(0);
        expect(metricValue(text, "remram_hooks_reflections_enqueued_total")).toBe(0);
        // "Please remember that …" is an explicit save: the plugin sent it to Cortex once, before the model answered.
        // Cortex answered within the plugin's wait (saved) or after it, when the save went to the plugin's queue
        // (queued, then delivered): on a busy 2-core CI runner both happen. Either way that copy is the only one.
        const saves = (outcome: string, metrics = text) =>
          metricValue(metrics, "remram_hooks_explicit_saves_total", `outcome="${outcome}"`);
        expect(saves("saved") + saves("queued"), await hooksDiagnostics()).toBe(1);
        expect(saves("rejected") + saves("dropped") + saves("delivery_failed")).toBe(0);
        if (saves("queued") === 1) {
          await waitFor(async () => (saves("delivered", await hooksMetrics()) === 1 ? true : undefined), {
            what: "the queued explicit save delivered",
            timeoutMs: 120_000,
            intervalMs: 1_000,
          });
        }
        const bundle = await recall(knownFactQuestion);
        expect(bundle, `${bundle}\n${await hooksDiagnostics()}`).toContain(knownFact);
      },
      turnTimeoutMs * 2,
    );

    it(
      "injects what the person told into a later run",
      async () => {
        const before = metricValue(await hooksMetrics(), "remram_hooks_injections_total");
        const { reply, ms } = await say(knownFactQuestion);
        expect(reply.trim()).not.toBe("");
        measured.firstReplyMs = ms;
        const after = await hooksMetrics();
        // What the person told is all Cortex holds for them (their explicit save), so it was injected.
        expect(metricValue(after, "remram_hooks_injections_total"), await hooksDiagnostics()).toBe(
          before + 1,
        );
        // Ollama in the pod is local: a private item may go into its prompt.
        expect(metricValue(after, "remram_hooks_private_items_withheld_total")).toBe(0);
      },
      turnTimeoutMs,
    );
  });
}
