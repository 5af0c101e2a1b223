import { describe, expect, it } from "vitest";
import { remramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import { buildGateway, channelTokenVersionsAnnotation } from "./children/gateway.js";
import { channelTokenEnv } from "./openclaw-channels.js";
import { applianceContext } from "./testing/context.js";
import { podOf } from "./testing/pod.js";

const telegramToken = { name: "bots", key: "telegram" };
const discordToken = { name: "bots", key: "discord" };
const household = {
  id: "home",
  members: [
    {
      id: "alice",
      identities: [
        { channel: "telegram", peer: "123456789" },
        { channel: "telegram", peer: "223456789" },
        { channel: "discord", peer: "123456789012345678" },
      ],
    },
    { id: "bob", identities: [{ channel: "telegram", peer: "323456789" }] },
    { id: "carol", identities: [{ channel: "whatsapp", peer: "+4712345678" }] },
  ],
};
const withChannels = (gateway: Record<string, unknown> = {}) => ({
  household,
  gateway: {
    channels: {
      telegram: { botTokenSecretRef: telegramToken },
      discord: { tokenSecretRef: discordToken },
    },
    ...gateway,
  },
});

interface Config {
  channels?: Record<string, Record<string, unknown>>;
  bindings?: unknown[];
  plugins: { allow: string[] };
}

function gatewayOf(specInput: unknown, channelTokenVersions: Record<string, string> = {}) {
  const children = buildGateway(applianceContext(specInput, { channelTokenVersions }));
  const secret = children.find((child) => child.kind === "Secret") as unknown as {
    data: Record<string, string>;
  };
  const configJson = Buffer.from(secret.data["openclaw.json"] as string, "base64").toString("utf8");
  const deployment = children.find((child) => child.kind === "Deployment");
  if (deployment === undefined) throw new Error("no gateway Deployment");
  const pod = podOf(deployment);
  const env = (pod.containers[0]?.env ?? []) as { name: string; value?: string; valueFrom?: unknown }[];
  const annotations = (
    deployment as unknown as { spec: { template: { metadata: { annotations: Record<string, string> } } } }
  ).spec.template.metadata.annotations;
  return { config: JSON.parse(configJson) as Config, configJson, env, annotations };
}

describe("the gateway's chat channels", () => {
  it("wire Telegram and Discord with the token as an environment SecretRef, answering the household's members only", () => {
    const { config, env } = gatewayOf(withChannels(), { telegram: "41", discord: "42" });
    expect(config.channels).toEqual({
      telegram: {
        enabled: true,
        botToken: { source: "env", provider: "default", id: "REMRAM_TELEGRAM_BOT_TOKEN" },
        dmPolicy: "allowlist",
        allowFrom: ["123456789", "223456789", "323456789"],
        groupPolicy: "disabled",
        configWrites: false,
      },
      discord: {
        enabled: true,
        token: { source: "env", provider: "default", id: "REMRAM_DISCORD_BOT_TOKEN" },
        dmPolicy: "allowlist",
        allowFrom: ["123456789012345678"],
        groupPolicy: "disabled",
        configWrites: false,
      },
    });
    expect(config.plugins.allow).toEqual(expect.arrayContaining(["telegram", "discord"]));
    // The tokens reach the container from the user's Secret; channels start (no OPENCLAW_SKIP_CHANNELS).
    expect(env).toContainEqual({
      name: channelTokenEnv.telegram,
      valueFrom: { secretKeyRef: telegramToken },
    });
    expect(env).toContainEqual({ name: channelTokenEnv.discord, valueFrom: { secretKeyRef: discordToken } });
    expect(env.map((variable) => variable.name)).not.toContain("OPENCLAW_SKIP_CHANNELS");
  });

  it("never write a token value into openclaw.json, and roll the pod on a rotated token by its Secret's version", () => {
    const before = gatewayOf(withChannels(), { telegram: "41", discord: "42" });
    expect(before.configJson).not.toMatch(/valueFrom|secretKeyRef/);
    expect(before.annotations[channelTokenVersionsAnnotation]).toBe("telegram=41,discord=42");
    const rotated = gatewayOf(withChannels(), { telegram: "77", discord: "42" });
    expect(rotated.annotations[channelTokenVersionsAnnotation]).toBe("telegram=77,discord=42");
    // The config itself does not change with the token.
    expect(rotated.configJson).toBe(before.configJson);
  });

  it("leave a channel whose token is missing out of the config and the environment (the pod would not start)", () => {
    const { config, env, annotations } = gatewayOf(withChannels(), { telegram: "41" });
    expect(Object.keys(config.channels ?? {})).toEqual(["telegram"]);
    expect(config.plugins.allow).not.toContain("discord");
    expect(env.map((variable) => variable.name)).not.toContain(channelTokenEnv.discord);
    expect(annotations[channelTokenVersionsAnnotation]).toBe("telegram=41");
    const none = gatewayOf(withChannels());
    expect(none.config).not.toHaveProperty("channels");
    expect(none.env).toContainEqual({ name: "OPENCLAW_SKIP_CHANNELS", value: "1" });
    expect(none.annotations).not.toHaveProperty(channelTokenVersionsAnnotation);
  });

  it("keep the gateway without channels as before when none is configured", () => {
    const { config, env } = gatewayOf({ household });
    expect(config).not.toHaveProperty("channels");
    expect(config).not.toHaveProperty("bindings");
    expect(config.plugins.allow).toEqual(["ollama", "remram-hooks"]);
    expect(env).toContainEqual({ name: "OPENCLAW_SKIP_CHANNELS", value: "1" });
  });

  it("pass a self-hosted Bot API root on to OpenClaw", () => {
    const { config } = gatewayOf(
      {
        household,
        gateway: {
          channels: { telegram: { botTokenSecretRef: telegramToken, apiRoot: "http://bot-api.lan:8081" } },
        },
      },
      { telegram: "1" },
    );
    expect(config.channels?.telegram?.apiRoot).toBe("http://bot-api.lan:8081");
  });

  it("give every channel's account to the first agent when there are several (OpenClaw's explicit ownership)", () => {
    const { config } = gatewayOf(withChannels({ agents: [{ id: "main" }, { id: "reader" }] }), {
      telegram: "1",
      discord: "2",
    });
    expect(config.bindings).toEqual([
      { agentId: "main", match: { channel: "telegram", accountId: "default" } },
      { agentId: "main", match: { channel: "discord", accountId: "default" } },
    ]);
    expect(gatewayOf(withChannels(), { telegram: "1" }).config).not.toHaveProperty("bindings");
  });
});

describe("spec.gateway.channels admission (zod; the CRD's CEL rules carry the same messages)", () => {
  const issues = (specInput: unknown) => {
    const result = remramApplianceSpec.safeParse(specInput);
    return result.success
      ? []
      : result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
  };

  it("refuse a channel no household member is on: the bot would answer nobody, or need opening to anyone", () => {
    expect(issues({ gateway: { channels: { telegram: { botTokenSecretRef: telegramToken } } } })).toEqual([
      "gateway.channels.telegram: gateway.channels.telegram needs a household member with a telegram identity (spec.household): the bot answers the household's members only",
    ]);
    expect(
      issues({
        household: {
          id: "home",
          members: [{ id: "carol", identities: [{ channel: "whatsapp", peer: "+47" }] }],
        },
        gateway: { channels: { discord: { tokenSecretRef: discordToken } } },
      }),
    ).toEqual([expect.stringMatching(/^gateway\.channels\.discord: .*discord identity/)]);
    expect(issues(withChannels())).toEqual([]);
  });

  it("refuse unknown channels and settings that would open the bot", () => {
    expect(issues({ household, gateway: { channels: { whatsapp: {} } } })).not.toEqual([]);
    expect(
      issues({
        household,
        gateway: { channels: { telegram: { botTokenSecretRef: telegramToken, dmPolicy: "open" } } },
      }),
    ).not.toEqual([]);
  });
});
