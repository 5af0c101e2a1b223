import { describe, expect, it } from "vitest";
import { remramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import { buildGateway, cloudKeyVersionAnnotation } from "./children/gateway.js";
import { cloudApiKeyEnv } from "./openclaw-escalation.js";
import { applianceConditions } from "./status.js";
import { applianceContext } from "./testing/context.js";
import { podOf } from "./testing/pod.js";

const cloud = {
  provider: "openrouter",
  baseUrl: "https://llm.example.net/v1",
  model: "vendor/large-model",
  apiKeySecretRef: { name: "cloud-key", key: "apiKey" },
};

interface GatewayConfig {
  models: { providers: Record<string, Record<string, unknown>> };
  plugins: {
    allow: string[];
    entries: { "remram-hooks": { config: { escalation: Record<string, unknown> } } };
  };
}

function gatewayOf(specInput: unknown, cloudKeyVersion?: string) {
  const children = buildGateway(
    applianceContext(specInput, cloudKeyVersion === undefined ? {} : { cloudKeyVersion }),
  );
  const secret = children.find((child) => child.kind === "Secret") as unknown as {
    data: Record<string, string>;
  };
  const configText = Buffer.from(secret.data["openclaw.json"] ?? "", "base64").toString("utf8");
  const deployment = children.find((child) => child.kind === "Deployment");
  if (deployment === undefined) throw new Error("no gateway Deployment");
  const annotations =
    (deployment as unknown as { spec: { template: { metadata: { annotations?: Record<string, string> } } } })
      .spec.template.metadata.annotations ?? {};
  return { config: JSON.parse(configText) as GatewayConfig, configText, pod: podOf(deployment), annotations };
}

describe("escalation to a cloud model in the gateway's config", () => {
  it("registers the cloud provider with its key as an environment SecretRef and tells the plugin the policy", () => {
    const { config, configText, pod, annotations } = gatewayOf(
      {
        escalation: {
          cloud,
          complexityThreshold: 6,
          domains: [{ name: "health", keywords: ["doctor"], policy: "local-only" }],
        },
      },
      "4711",
    );
    expect(config.models.providers.openrouter).toEqual({
      baseUrl: "https://llm.example.net/v1",
      api: "openai-completions",
      apiKey: { source: "env", provider: "default", id: cloudApiKeyEnv },
      timeoutSeconds: 180,
      models: [
        {
          id: "vendor/large-model",
          name: "vendor/large-model",
          input: ["text"],
          contextWindow: 128000,
          maxTokens: 4096,
        },
      ],
    });
    expect(config.plugins.entries["remram-hooks"].config.escalation).toEqual({
      enabled: true,
      local: { provider: "ollama", model: "qwen3:8b", contextWindow: 16384 },
      cloud: { provider: "openrouter", model: "vendor/large-model" },
      localProviders: ["ollama", "ollama-reflect"],
      contextPressureRatio: 0.8,
      complexityThreshold: 6,
      domains: [{ name: "health", keywords: ["doctor"], policy: "local-only" }],
      allowPrivateToCloud: false,
    });
    // The value reaches the container from the Secret; the config and the pod template only name it.
    const gateway = pod.containers.find((container) => container.name === "gateway");
    expect(gateway?.env).toContainEqual({
      name: cloudApiKeyEnv,
      valueFrom: { secretKeyRef: { name: "cloud-key", key: "apiKey" } },
    });
    expect(configText).not.toContain("cloud-key");
    expect(annotations[cloudKeyVersionAnnotation]).toBe("4711");
  });

  it("loads Anthropic's adapter for a cloud model on Anthropic's API, and only then", () => {
    const anthropic = gatewayOf(
      { escalation: { cloud: { ...cloud, provider: "anthropic", api: "anthropic-messages" } } },
      "1",
    );
    expect(anthropic.config.plugins.allow).toEqual(["ollama", "anthropic", "remram-hooks"]);
    expect(gatewayOf({ escalation: { cloud } }, "1").config.plugins.allow).toEqual([
      "ollama",
      "remram-hooks",
    ]);
  });

  it("escalates nothing without the key, when disabled, or without a cloud model, and mounts no key", () => {
    for (const [spec, version] of [
      [{ escalation: { cloud } }, undefined],
      [{ escalation: { cloud, enabled: false } }, "1"],
      [{}, undefined],
    ] as const) {
      const { config, pod, annotations } = gatewayOf(spec, version);
      expect(config.plugins.entries["remram-hooks"].config.escalation).not.toHaveProperty("cloud");
      expect(Object.keys(config.models.providers)).toEqual(["ollama", "ollama-reflect"]);
      const gateway = pod.containers.find((container) => container.name === "gateway");
      expect(gateway?.env?.map((variable) => variable.name)).not.toContain(cloudApiKeyEnv);
      expect(annotations).not.toHaveProperty(cloudKeyVersionAnnotation);
    }
  });

  it("refuses the box's own provider ids and unknown APIs at admission's schema", () => {
    expect(() =>
      remramApplianceSpec.parse({ escalation: { cloud: { ...cloud, api: "bedrock" } } }),
    ).toThrow();
    expect(() =>
      remramApplianceSpec.parse({ escalation: { cloud: { ...cloud, apiKeySecretRef: { name: "x" } } } }),
    ).toThrow(/key/);
  });
});

describe("the EscalationReady condition", () => {
  const observe = (specInput: unknown, cloudKeyProblem?: string) => {
    const ready = { exists: true, upToDate: true, available: true };
    return applianceConditions({
      spec: remramApplianceSpec.parse(specInput),
      gpu: { count: 0, hardwareLabelled: false },
      useGpu: false,
      workloads: { opensearch: ready, ollama: ready, cortex: ready, gateway: ready },
      models: { required: [], listed: [] },
      ...(cloudKeyProblem === undefined ? {} : { cloudKeyProblem }),
    });
  };
  const escalation = (conditions: ReturnType<typeof observe>) =>
    conditions.find((condition) => condition.type === "EscalationReady");
  const ready = (conditions: ReturnType<typeof observe>) =>
    conditions.find((condition) => condition.type === "Ready")?.status;

  it("says where turns may go, and never holds Ready back", () => {
    expect(escalation(observe({}))).toMatchObject({ status: "False", reason: "EscalationOff" });
    expect(escalation(observe({ escalation: { cloud } }))).toMatchObject({
      status: "True",
      reason: "CloudModelConfigured",
      message: "turns may escalate to openrouter/vendor/large-model",
    });
    const missing = observe({ escalation: { cloud } }, "Secret cloud-key has no key apiKey");
    expect(escalation(missing)).toMatchObject({
      status: "False",
      reason: "CloudKeyMissing",
      message: "Secret cloud-key has no key apiKey: every turn stays on the box until the key is there",
    });
    expect(ready(missing)).toBe("True");
  });
});
