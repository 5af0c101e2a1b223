import { describe, expect, it } from "vitest";
import { parsePluginConfig } from "./config.js";
import {
  complexitySignals,
  decideEscalation,
  type EscalationInput,
  modelOverrideFor,
  reflectionModelOverride,
} from "./escalation.js";

const escalation = parsePluginConfig({
  escalation: {
    local: { provider: "ollama", model: "smollm2", contextWindow: 2048 },
    cloud: { provider: "anthropic", model: "claude" },
    domains: [
      { name: "health", keywords: ["blood pressure", "diagnosis"], policy: "local-only" },
      { name: "legal", keywords: ["contract"], policy: "prefer-cloud" },
    ],
  },
}).escalation;

const plain: EscalationInput = {
  prompt: "What time is it in Oslo?",
  attachmentKinds: [],
  transcriptTokens: 0,
  knowledgeTokens: 0,
  knowledgeBlocksCloud: false,
};

describe("decideEscalation", () => {
  it("keeps a short plain question local", () => {
    expect(decideEscalation(plain, escalation)).toMatchObject({ target: "local", reason: "default_local" });
  });

  it("stays local without a cloud model whatever the prompt says", () => {
    const localOnly = parsePluginConfig({}).escalation;
    expect(decideEscalation({ ...plain, prompt: "/cloud please" }, localOnly)).toMatchObject({
      target: "local",
      reason: "no_cloud_model",
    });
  });

  it("follows an explicit user directive in either direction", () => {
    expect(decideEscalation({ ...plain, prompt: "/cloud summarise this" }, escalation)).toMatchObject({
      target: "cloud",
      reason: "user_directive_cloud",
    });
    expect(
      decideEscalation({ ...plain, prompt: "design a plan, step by step #local" }, escalation),
    ).toMatchObject({
      target: "local",
      reason: "user_directive_local",
    });
  });

  it("does not read a directive inside a longer word", () => {
    expect(decideEscalation({ ...plain, prompt: "see /cloudy/path" }, escalation).reason).toBe(
      "default_local",
    );
  });

  it("lets a local-only domain beat the user's cloud directive", () => {
    const decision = decideEscalation(
      { ...plain, prompt: "/cloud what does my blood pressure mean" },
      escalation,
    );
    expect(decision).toMatchObject({
      target: "local",
      reason: "domain_local_only",
      detail: { domain: "health" },
    });
  });

  it("escalates a prefer-cloud domain", () => {
    expect(decideEscalation({ ...plain, prompt: "Read this Contract" }, escalation)).toMatchObject({
      target: "cloud",
      reason: "domain_prefer_cloud",
    });
  });

  it("escalates under context pressure against the local window", () => {
    const decision = decideEscalation({ ...plain, transcriptTokens: 1200, knowledgeTokens: 200 }, escalation);
    expect(decision).toMatchObject({
      target: "cloud",
      reason: "context_pressure",
      detail: { localWindow: 2048 },
    });
  });

  it("escalates a complex request and stays local for a simple one", () => {
    const complex =
      "Analyze the trade-offs, then design a step-by-step migration plan:\n```sql\nselect 1;\n```";
    expect(decideEscalation({ ...plain, prompt: complex }, escalation)).toMatchObject({
      target: "cloud",
      reason: "complexity",
    });
  });

  it("never escalates when the injected knowledge holds private items without consent", () => {
    const decision = decideEscalation(
      { ...plain, prompt: "/cloud help", knowledgeBlocksCloud: true },
      escalation,
    );
    expect(decision).toEqual({
      target: "local",
      reason: "privacy_private_knowledge",
      detail: { wouldHaveBeen: "user_directive_cloud" },
    });
  });
});

describe("complexitySignals", () => {
  it("scores non-text attachments and many questions", () => {
    expect(complexitySignals("a? b? c?", ["image"])).toMatchObject({ questions: 1, attachments: 2 });
  });
});

describe("modelOverrideFor", () => {
  it("names the configured model of the chosen target", () => {
    expect(modelOverrideFor({ target: "cloud", reason: "complexity", detail: {} }, escalation)).toEqual({
      providerOverride: "anthropic",
      modelOverride: "claude",
    });
    expect(modelOverrideFor({ target: "local", reason: "error", detail: {} }, escalation)).toEqual({
      providerOverride: "ollama",
      modelOverride: "smollm2",
    });
  });

  it("keeps the run's own model when escalation is not live, so each agent's model stands", () => {
    const local = { target: "local" as const, reason: "no_cloud_model" as const, detail: {} };
    expect(modelOverrideFor(local, { ...escalation, cloud: undefined })).toBeUndefined();
    expect(
      modelOverrideFor({ ...local, reason: "disabled" }, { ...escalation, enabled: false }),
    ).toBeUndefined();
  });
});

describe("reflectionModelOverride", () => {
  it("runs reflection on the reflection model, else the local one, never the cloud", () => {
    const both = parsePluginConfig({
      escalation: {
        local: { provider: "ollama", model: "smollm2" },
        cloud: { provider: "anthropic", model: "claude" },
      },
      reflection: { model: { provider: "ollama-reflect", model: "smollm2" } },
    });
    expect(reflectionModelOverride(both)).toEqual({
      providerOverride: "ollama-reflect",
      modelOverride: "smollm2",
    });
    const localOnly = parsePluginConfig({ escalation: { local: { provider: "ollama", model: "smollm2" } } });
    expect(reflectionModelOverride(localOnly)).toEqual({
      providerOverride: "ollama",
      modelOverride: "smollm2",
    });
    expect(reflectionModelOverride(parsePluginConfig({}))).toBeUndefined();
  });
});
