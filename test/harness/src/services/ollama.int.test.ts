import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ollama } from "ollama";
import { afterAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../inject.js";
import { startOllama } from "./ollama.js";

const ollamaEndpoints = testbedEndpoints("ollama");
const client = new Ollama({ host: ollamaEndpoints.url });

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  return dot / Math.sqrt(normA * normB);
}

describe("the test bed's Ollama embedder (all-MiniLM-L6-v2)", () => {
  it("returns one 384-dimension, unit-length vector per input", async () => {
    const response = await client.embed({
      model: ollamaEndpoints.embedModel,
      input: ["The heating is off.", "Remram remembers what matters."],
    });
    expect(response.embeddings).toHaveLength(2);
    for (const vector of response.embeddings) {
      expect(vector).toHaveLength(384);
      // modules.json lists a Normalize step; Ollama's BERT converter must have honoured it.
      expect(Math.hypot(...vector)).toBeCloseTo(1, 3);
    }
  });

  it("scores two paraphrases closer than an unrelated sentence", async () => {
    const { embeddings } = await client.embed({
      model: ollamaEndpoints.embedModel,
      input: [
        "My daughter is allergic to peanuts.",
        "Peanuts give my little girl an allergic reaction.",
        "The train to Berlin leaves at nine in the morning.",
      ],
    });
    const [anchor, paraphrase, unrelated] = embeddings;
    if (!anchor || !paraphrase || !unrelated) throw new Error("expected three embeddings");
    const paraphraseScore = cosine(anchor, paraphrase);
    const unrelatedScore = cosine(anchor, unrelated);
    expect(paraphraseScore).toBeGreaterThan(0.5);
    expect(paraphraseScore - unrelatedScore).toBeGreaterThan(0.3);
  });

  it("embeds the same text to the same vector every time", async () => {
    const text = "Deterministic retrieval needs deterministic embeddings.";
    const first = await client.embed({ model: ollamaEndpoints.embedModel, input: text });
    const second = await client.embed({ model: ollamaEndpoints.embedModel, input: text });
    expect(second.embeddings).toEqual(first.embeddings);
  });
});

describe("the test bed's Ollama chat model (SmolLM2-135M-Instruct)", () => {
  it("answers a chat message through the native API", async () => {
    const response = await client.chat({
      model: ollamaEndpoints.chatModel,
      messages: [{ role: "user", content: "Name one colour of the rainbow." }],
      options: { temperature: 0, seed: 7, num_predict: 32 },
    });
    expect(response.message.role).toBe("assistant");
    expect(response.message.content.trim()).not.toBe("");
    // The ChatML stop tokens end the turn; they must never leak into the text.
    expect(response.message.content).not.toContain("<|im_");
  });

  it("answers on the OpenAI-compatible /v1/chat/completions endpoint that OpenClaw uses", async () => {
    const response = await fetch(`${ollamaEndpoints.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: ollamaEndpoints.chatModel,
        messages: [
          { role: "system", content: "You are a terse assistant." },
          { role: "user", content: "Say hello." },
        ],
        temperature: 0,
        max_tokens: 32,
      }),
    });
    expect(response.status).toBe(200);
    const completion = (await response.json()) as {
      object: string;
      model: string;
      choices: { message: { role: string; content: string }; finish_reason: string }[];
    };
    expect(completion.object).toBe("chat.completion");
    expect(completion.model).toBe(ollamaEndpoints.chatModel);
    expect(completion.choices[0]?.message.role).toBe("assistant");
    expect(completion.choices[0]?.message.content.trim()).not.toBe("");
  });

  it("accepts a /v1 request that offers tools, as every OpenClaw agent turn does", async () => {
    const response = await fetch(`${ollamaEndpoints.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: ollamaEndpoints.chatModel,
        messages: [{ role: "user", content: "What is the weather in Oslo?" }],
        tools: [
          {
            type: "function",
            function: {
              name: "get_weather",
              description: "Current weather for a city",
              parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
            },
          },
        ],
        temperature: 0,
        max_tokens: 32,
      }),
    });
    // A template without .Tools makes Ollama answer 400 "does not support tools".
    expect(response.status, await response.clone().text()).toBe(200);
    const completion = (await response.json()) as {
      choices: { message: { content: string; tool_calls?: unknown[] } }[];
    };
    const message = completion.choices[0]?.message;
    expect(message?.content.trim() !== "" || (message?.tool_calls?.length ?? 0) > 0).toBe(true);
  });
});

/** PIDs of live processes whose environment says OLLAMA_MODELS=<modelsDir> (Linux /proc). */
function processesServing(modelsDir: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, "utf8")
          .split("\0")
          .includes(`OLLAMA_MODELS=${modelsDir}`);
      } catch {
        return false; // gone meanwhile, or not ours to read
      }
    })
    .map(Number);
}

describe("startOllama", () => {
  const emptyModelsDir = mkdtempSync(join(tmpdir(), "remram-ollama-empty-"));
  afterAll(() => rmSync(emptyModelsDir, { recursive: true, force: true }));

  it("refuses a models directory without the pinned models, names them and the installer, and leaves no process", async () => {
    const error = await startOllama({ modelsDir: emptyModelsDir, timeoutMs: 30_000 }).then(
      () => new Error("startOllama resolved over an empty models directory"),
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toContain(`${ollamaEndpoints.embedModel}, ${ollamaEndpoints.chatModel}`);
    expect(message).toContain("hack/install-ollama.sh");
    expect(processesServing(emptyModelsDir)).toEqual([]);
  });
});
