import { describe, expect, it } from "vitest";
import {
  deepMerge,
  type OpenClawConfigInput,
  openClawConfig,
  openClawEnvironment,
  replyText,
} from "./openclaw.js";

const input: OpenClawConfigInput = {
  port: 41000,
  token: "secret-token",
  workspace: "/tmp/home/workspace",
  logFile: "/tmp/home/openclaw.log",
  provider: {
    api: "openai-completions",
    baseUrl: "http://127.0.0.1:42000/v1",
    model: "smollm2-135m-instruct",
  },
  plugins: [
    { id: "remram-probe", path: "/plugins/probe", config: { marker: "M" }, hooks: { timeoutMs: 5000 } },
  ],
};

/** Read a nested key of the generated config, failing clearly if a level is missing. */
function at(config: Record<string, unknown>, path: string): unknown {
  return path.split(".").reduce<unknown>((node, key) => {
    if (typeof node !== "object" || node === null) throw new Error(`no ${path} in config`);
    return (node as Record<string, unknown>)[key];
  }, config);
}

describe("the generated openclaw.json", () => {
  it("binds the gateway to loopback with token auth and the chat completions endpoint on", () => {
    const config = openClawConfig(input);
    expect(at(config, "gateway.port")).toBe(41000);
    expect(at(config, "gateway.bind")).toBe("loopback");
    expect(at(config, "gateway.auth")).toEqual({ mode: "token", token: "secret-token" });
    expect(at(config, "gateway.http.endpoints.chatCompletions.enabled")).toBe(true);
  });

  it("makes the given model the agent's only model, without tools unless the model supports them", () => {
    const config = openClawConfig(input);
    expect(at(config, "models.mode")).toBe("replace");
    expect(at(config, "agents.defaults.model.primary")).toBe("testbed/smollm2-135m-instruct");
    expect(at(config, "models.providers.testbed")).toMatchObject({
      api: "openai-completions",
      baseUrl: "http://127.0.0.1:42000/v1",
      models: [
        { id: "smollm2-135m-instruct", compat: { supportsTools: false, maxTokensField: "max_tokens" } },
      ],
    });
  });

  it("loads each plugin from its folder with its config and conversation access, and nothing else", () => {
    const config = openClawConfig(input);
    expect(at(config, "plugins.load.paths")).toEqual(["/plugins/probe"]);
    expect(at(config, "plugins.allow")).toEqual(["remram-probe"]);
    expect(at(config, "plugins.entries.remram-probe")).toEqual({
      enabled: true,
      hooks: { timeoutMs: 5000, allowConversationAccess: true },
      config: { marker: "M" },
    });
  });

  it("also allows the bundled ollama plugin when the provider speaks Ollama's native API", () => {
    const config = openClawConfig({
      ...input,
      provider: { api: "ollama", baseUrl: "http://127.0.0.1:11434", model: "m" },
      bundledPlugins: ["openai"],
    });
    expect(at(config, "plugins.allow")).toEqual(["remram-probe", "ollama", "openai"]);
  });

  it("turns off the built-in memory, update checks, telemetry and mDNS", () => {
    const config = openClawConfig(input);
    expect(at(config, "plugins.slots.memory")).toBe("none");
    expect(at(config, "memory.search.enabled")).toBe(false);
    expect(at(config, "update.checkOnStart")).toBe(false);
    expect(at(config, "telemetry.enabled")).toBe(false);
    expect(at(config, "discovery.mdns.mode")).toBe("off");
  });

  it("applies extra config over the generated one without dropping sibling keys", () => {
    const config = openClawConfig({
      ...input,
      extraConfig: { gateway: { auth: { token: "other" } }, cron: { enabled: false } },
    });
    expect(at(config, "gateway.auth")).toEqual({ mode: "token", token: "other" });
    expect(at(config, "gateway.bind")).toBe("loopback");
    expect(at(config, "cron.enabled")).toBe(false);
  });

  it("switches plugins off rather than writing an empty allowlist, which would let every bundled plugin load", () => {
    const config = openClawConfig({ ...input, plugins: [] });
    expect(at(config, "plugins.enabled")).toBe(false);
    expect(at(config, "plugins.allow")).toBeUndefined();
  });
});

describe("deep merging", () => {
  it("replaces arrays and scalars instead of merging them", () => {
    expect(deepMerge({ a: [1, 2], b: { c: 1, d: 2 } }, { a: [3], b: { d: null } })).toEqual({
      a: [3],
      b: { c: 1, d: null },
    });
  });
});

describe("the reply of a chat completion", () => {
  it("is the first choice's message content", () => {
    expect(replyText({ choices: [{ message: { role: "assistant", content: "hi" } }] })).toBe("hi");
  });

  it("is an error for a body that is not a chat completion", () => {
    expect(() => replyText({ error: { message: "boom" } })).toThrow(/not a chat completion.*boom/);
  });
});

describe("the gateway's environment", () => {
  it("drops vitest's variables and the caller's OPENCLAW_* settings, keeps the rest, and adds the overrides", () => {
    const environment = openClawEnvironment(
      {
        PATH: "/bin",
        VITEST: "true",
        NODE_ENV: "test",
        VITEST_WORKER_ID: "1",
        OPENCLAW_GATEWAY_TOKEN: "stray",
      },
      { HOME: "/run/home", OPENCLAW_SKIP_CHANNELS: "1" },
    );
    expect(environment).toEqual({ PATH: "/bin", HOME: "/run/home", OPENCLAW_SKIP_CHANNELS: "1" });
  });
});
