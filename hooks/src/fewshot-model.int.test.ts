// The test bed's few-shot SmolLM2 (hack/ollama/fewshot.Modelfile) against the prompts this plugin really sends:
// the real-node suite relies on it to acknowledge and reflect what a person said and to call the read tool, so a
// change to the template, the reflection prompt or Ollama shows here in seconds instead of in a ten-minute run.
import { Ollama } from "ollama";
import { describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { pinned } from "../../test/harness/src/versions.js";
import {
  buildReflectionJob,
  parseReflectionReply,
  reflectionInstructions,
  reflectionMessage,
  reflectionResponseFormat,
} from "./reflection.js";

const ollama = new Ollama({ host: testbedEndpoints("ollama").url });
const model = pinned("FEWSHOT_MODEL_NAME");
const readTool = {
  type: "function",
  function: {
    name: "read",
    description: "Read the contents of a file.",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
};

/**
 * What OpenClaw puts before the person's words in the user message the model gets, at times whose first reply once
 * differed ("02:44" drew "{}" from the reflection grammar before the template ended in the assistant's newline).
 */
const envelopes = [
  "[Tue 2026-11-24 22:03 UTC] ",
  "[Wed 2026-11-25 02:44 UTC] ",
  "[Sun 2027-03-07 05:58 UTC] ",
  "",
];
const told = "Please remember that my sister Ingrid lives in Bergen and visits every June.";
const system = { role: "system", content: "You are a personal assistant running inside OpenClaw." };

/**
 * The delta the model writes for one finished turn, through the plugin's own prompt, schema and parser; `runEnvelope`
 * is what OpenClaw may put before the reflection run's own message.
 */
async function reflect(user: string, assistant: string, runEnvelope = "") {
  const job = buildReflectionJob({
    jobId: "j-1",
    principal: { userId: "alice", agentId: "main" },
    sessionKey: "agent:main:openai-user:alice",
    messages: [
      { role: "user", content: user },
      { role: "assistant", content: [{ type: "text", text: assistant }] },
    ],
    maxChars: 4000,
    now: new Date(),
  });
  if (job === undefined) throw new Error("no reflection job for the turn");
  const { json_schema } = reflectionResponseFormat() as { json_schema: { schema: Record<string, unknown> } };
  const response = await ollama.chat({
    model,
    messages: [
      { role: "system", content: reflectionInstructions },
      { role: "user", content: `${runEnvelope}${reflectionMessage(job)}` },
    ],
    format: json_schema.schema,
  });
  const parsed = parseReflectionReply(response.message.content);
  if (!parsed.ok) throw new Error(`${parsed.error}: ${response.message.content}`);
  return parsed.delta;
}

describe("the test bed's few-shot SmolLM2", () => {
  it.each(envelopes)("offered tools, acknowledges what the person tells it (%j)", async (envelope) => {
    const reply = await ollama.chat({
      model,
      messages: [system, { role: "user", content: `${envelope}${told}` }],
      tools: [readTool],
    });
    expect(reply.message.tool_calls ?? []).toEqual([]);
    expect(reply.message.content.trim()).toBe("Noted.");
  });

  it.each(envelopes)(
    "reflects what the person told as a fact, through the plugin's prompt and schema (%j)",
    async (envelope) => {
      const delta = await reflect(`${envelope}${told}`, "Noted.");
      expect(delta.items).toHaveLength(1);
      expect(delta.items[0]?.statement).toContain("Ingrid lives in Bergen");
      const other = await reflect(
        `${envelope}Our neighbour Sven keeps bees behind the old barn.`,
        "How lovely!",
        envelope,
      );
      expect(other.items[0]?.statement).toContain("Sven keeps bees behind the old barn");
    },
  );

  it("offered tools, calls read on the file the person names, then says it read it", async () => {
    const path = "artifacts/households/home/constraints.md";
    for (const ask of envelopes.map((envelope) => `${envelope}Please read the file ${path}`)) {
      const messages = [system, { role: "user", content: ask }];
      const first = await ollama.chat({ model, messages, tools: [readTool] });
      expect(first.message.tool_calls?.[0]?.function).toMatchObject({ name: "read", arguments: { path } });
      const second = await ollama.chat({
        model,
        messages: [
          ...messages,
          { role: "assistant", content: "", tool_calls: first.message.tool_calls ?? [] },
          { role: "tool", content: "- The boiler must be serviced every May" },
        ],
        tools: [readTool],
      });
      expect(second.message.tool_calls ?? []).toEqual([]);
      expect(second.message.content).toContain(path);
    }
  });
});
