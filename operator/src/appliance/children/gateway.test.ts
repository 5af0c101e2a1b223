import { describe, expect, it } from "vitest";
import { buildApplianceChildren } from "../children.js";
import { gatewayNpmCacheSeed } from "../openclaw-config.js";
import { applianceContext, gatewayConfigFor } from "../testing/context.js";
import { podOf } from "../testing/pod.js";
import { gatewayNpmCache, retrieveTimeoutMs } from "./gateway.js";

const context = applianceContext;

describe("the appliance's children", () => {
  it("seed a gateway config with memory off, Ollama as provider, the hooks plugin, Cortex and token auth on a LAN bind", () => {
    const secret = buildApplianceChildren(context({})).find(
      (child) => child.metadata.name === "box-gateway-config",
    ) as unknown as { data: Record<string, string> };
    const config = JSON.parse(Buffer.from(secret.data["openclaw.json"] as string, "base64").toString("utf8"));
    expect(config.gateway).toMatchObject({ bind: "lan", auth: { mode: "token", token: "gateway-secret" } });
    expect(config.memory.search.enabled).toBe(false);
    expect(config.plugins.slots.memory).toBe("remram-hooks");
    expect(config.plugins.entries["memory-core"]).toEqual({ enabled: false });
    expect(config.plugins.load.paths).toEqual(["/opt/remram-hooks/plugin"]);
    expect(config.plugins.entries["remram-hooks"]).toMatchObject({
      enabled: true,
      hooks: { allowConversationAccess: true },
      config: {
        cortex: { url: "http://box-cortex.home.svc:8080", tokenFile: "/var/run/secrets/remram/cortex/token" },
        injection: { tokenCeiling: 2048 },
        reflection: { model: { provider: "ollama-reflect", model: "qwen3:14b" } },
        archive: { enabled: true },
      },
      subagent: { allowModelOverride: true, allowedModels: ["ollama-reflect/qwen3:14b"] },
    });
    // Reflection replies are held to the delta's schema; conversation replies are not.
    expect(config.models.providers["ollama-reflect"].models).toEqual([
      expect.objectContaining({
        id: "qwen3:14b",
        params: expect.objectContaining({ format: expect.objectContaining({ type: "object" }) }),
      }),
    ]);
    expect(config.models.providers.ollama.models.map((model: { id: string }) => model.id)).toEqual([
      "qwen3:8b",
    ]);
    expect(config.models.providers.ollama.models[0].params.format).toBeUndefined();
    expect(config.models.providers.ollama).toMatchObject({
      api: "ollama",
      baseUrl: "http://box-ollama:11434",
    });
    expect(config.agents.defaults.model.primary).toBe("ollama/qwen3:8b");
    // A replacement pod takes over OpenClaw's owner lease only under the same host name.
    const gateway = buildApplianceChildren(context({})).find(
      (child) => child.kind === "Deployment" && child.metadata.name === "box-gateway",
    ) as unknown as { spec: { template: { spec: { hostname?: string } } } };
    expect(gateway.spec.template.spec.hostname).toBe("box-gateway");
    // Nothing beyond the Ollama adapter and the hooks plugin loads.
    expect(config.plugins.allow).toEqual(["ollama", "remram-hooks"]);
  });

  it("tell the gateway the chat models' window and reply cap, and keep bootstrap files out of a small window", () => {
    // biome-ignore lint/suspicious/noExplicitAny: a JSON document read back for assertions
    const gatewayConfig = (spec: Record<string, unknown>) => gatewayConfigFor(spec) as any;
    const roomy = gatewayConfig({});
    expect(roomy.models.providers.ollama.models[0]).toMatchObject({
      contextWindow: 16384,
      maxTokens: 2048,
      params: { num_ctx: 16384, num_predict: 2048 },
    });
    expect(roomy.agents.defaults.skipBootstrap).toBeUndefined();
    expect(roomy.tools.allow).toBeUndefined();
    const small = gatewayConfig({
      ollama: { contextWindow: 8192, maxOutputTokens: 128 },
      gateway: { tools: { allow: ["read"] } },
    });
    expect(small.models.providers.ollama.models[0]).toMatchObject({
      contextWindow: 8192,
      params: { num_ctx: 8192, num_predict: 128 },
    });
    expect(small.agents.defaults).toMatchObject({ skipBootstrap: true, contextInjection: "never" });
    // Narrowed tools keep Remram's memory tools.
    expect(small.tools.allow).toEqual(["read", "memory_search", "memory_get"]);
    // Reflection gets room for a whole delta whatever the reply cap; a larger reply cap holds for it too.
    expect(small.models.providers["ollama-reflect"].models[0]).toMatchObject({
      maxTokens: 1024,
      params: { num_ctx: 8192, num_predict: 1024 },
    });
    expect(roomy.models.providers["ollama-reflect"].models[0].maxTokens).toBe(2048);
  });
});

describe("the gateway pod's artifacts", () => {
  it("are mounted read-only into every agent's workspace", () => {
    const gateway = buildApplianceChildren(
      context({ gateway: { agents: [{ id: "main" }, { id: "reader", model: "tool-user:1b" }] } }),
    ).find((child) => child.kind === "Deployment" && child.metadata.name === "box-gateway");
    const mounts = (
      podOf(gateway).containers[0] as unknown as {
        volumeMounts: { mountPath: string; subPath?: string; readOnly?: boolean }[];
      }
    ).volumeMounts.filter((mount) => mount.subPath === "cortex/repo/artifacts");
    expect(mounts).toEqual([
      {
        name: "state",
        mountPath: "/data/workspace/artifacts",
        subPath: "cortex/repo/artifacts",
        readOnly: true,
      },
      {
        name: "state",
        mountPath: "/data/workspace/reader/artifacts",
        subPath: "cortex/repo/artifacts",
        readOnly: true,
      },
    ]);
  });
});

describe("the gateway pod with Discord", () => {
  const discord = {
    household: {
      id: "home",
      members: [{ id: "alice", identities: [{ channel: "discord", peer: "1234567" }] }],
    },
    gateway: { channels: { discord: { tokenSecretRef: { name: "bots", key: "discord" } } } },
  };
  const gatewayPod = (overrides: Parameters<typeof context>[1] = {}) => {
    const deployment = buildApplianceChildren(context(discord, overrides)).find(
      (child) => child.kind === "Deployment" && child.metadata.name === "box-gateway",
    );
    const pod = podOf(deployment) as unknown as {
      initContainers: {
        name: string;
        command: string[];
        volumeMounts: { name: string; mountPath: string }[];
      }[];
      containers: { env: { name: string; value?: string }[] }[];
    };
    const seed = pod.initContainers.find((container) => container.name === "seed-config");
    return { seed, env: pod.containers[0]?.env ?? [] };
  };

  it("lets the gateway install OpenClaw's Discord plugin from a copy of the image's npm cache, offline", () => {
    const { seed, env } = gatewayPod({ channelTokenVersions: { discord: "1" } });
    expect(seed?.command.at(-1)).toContain(`cp -R ${gatewayNpmCacheSeed}/. ${gatewayNpmCache}/`);
    expect(seed?.volumeMounts).toContainEqual({ name: "cache", mountPath: "/home/node/.cache" });
    expect(env).toEqual(
      expect.arrayContaining([
        { name: "npm_config_cache", value: gatewayNpmCache },
        { name: "npm_config_offline", value: "true" },
      ]),
    );
  });

  it("copies nothing and sets no npm settings while the channel is off (no token found)", () => {
    const { seed, env } = gatewayPod();
    expect(seed?.command.at(-1)).not.toContain(gatewayNpmCacheSeed);
    expect(seed?.volumeMounts.map((mount) => mount.name)).not.toContain("cache");
    expect(env.map((variable) => variable.name)).not.toContain("npm_config_offline");
  });
});

describe("the gateway's retrieve cap", () => {
  it("is the spec's, else 250 ms with a GPU and 2 s on the CPU fallback", () => {
    expect(retrieveTimeoutMs(context({}, { useGpu: true }))).toBe(250);
    expect(retrieveTimeoutMs(context({}, { useGpu: false }))).toBe(2000);
    expect(retrieveTimeoutMs(context({ cortex: { retrieval: { timeoutMs: 900 } } }, { useGpu: false }))).toBe(
      900,
    );
    const config = JSON.stringify(gatewayConfigFor({}));
    expect(config).toContain('"retrieveTimeoutMs":2000');
  });
});
