import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { binPath, repoRoot } from "../../test/harness/src/paths.js";
import { gatewayConfigFor } from "../src/appliance/testing/context.js";

const run = promisify(execFile);
const home = mkdtempSync(join(tmpdir(), "remram-openclaw-config-"));

afterAll(() => rmSync(home, { recursive: true, force: true }));

/** `openclaw config validate` of the pinned OpenClaw on what the operator would seed into the gateway pod. */
async function validate(
  specInput: unknown,
  overrides: Parameters<typeof gatewayConfigFor>[1] = {},
): Promise<ValidationResult> {
  const config = gatewayConfigFor(specInput, overrides);
  // In the pod an init container copies the plugin to /opt/remram-hooks; here the repository's folder stands in,
  // so the plugin's configSchema is checked against the config the operator generates.
  const withLocalPaths = {
    ...config,
    plugins: { ...(config.plugins as object), load: { paths: [join(repoRoot, "hooks")] } },
    agents: {
      ...(config.agents as { defaults: object }),
      defaults: { ...(config.agents as { defaults: object }).defaults, workspace: join(home, "workspace") },
    },
  };
  mkdirSync(join(home, ".openclaw"), { recursive: true });
  writeFileSync(join(home, ".openclaw", "openclaw.json"), JSON.stringify(withLocalPaths, null, 2));
  // OpenClaw prints nothing when it sees VITEST in its environment; it gets a clean one.
  const environment = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("VITEST") && name !== "NODE_ENV"),
  );
  const { stdout } = await run(binPath("openclaw"), ["config", "validate", "--json"], {
    env: { ...environment, HOME: home, OPENCLAW_SKIP_CHANNELS: "1" },
    timeout: 90_000,
  });
  return JSON.parse(stdout) as ValidationResult;
}

interface ValidationResult {
  valid: boolean;
  warnings: { path?: string; message?: string }[];
}

/** A household on Telegram and Discord, both bots' tokens found (their Secrets' resourceVersions). */
const channelsSpec = (gateway: Record<string, unknown> = {}) => ({
  household: {
    id: "home",
    members: [
      {
        id: "alice",
        identities: [
          { channel: "telegram", peer: "123456789" },
          { channel: "discord", peer: "123456789012345678" },
        ],
      },
      { id: "bob", identities: [{ channel: "telegram", peer: "987654321" }] },
    ],
  },
  gateway: {
    channels: {
      telegram: { botTokenSecretRef: { name: "bots", key: "telegram" } },
      discord: { tokenSecretRef: { name: "bots", key: "discord" } },
    },
    ...gateway,
  },
});
const tokensFound = { channelTokenVersions: { telegram: "1", discord: "2" } };
/**
 * Discord is OpenClaw's official plugin @openclaw/discord, not bundled with 2026.9.6: its schema is core's, and the
 * gateway installs the plugin at its first start (gateway-discord.int.test.ts), so a config checked before then
 * warns that it is not installed yet.
 */
const discordNotInstalled = {
  path: "plugins.allow",
  message: expect.stringContaining("plugin not installed: discord"),
};

describe("the generated openclaw.json", () => {
  it("is valid, without warnings, for the pinned OpenClaw with the Remram hooks plugin loaded", async () => {
    expect(await validate({})).toEqual(expect.objectContaining({ valid: true, warnings: [] }));
  });

  it("is valid, without warnings, with a household's identity links, principals and the agent's tool policy", async () => {
    const result = await validate({
      gateway: { dmScope: "per-peer" },
      household: {
        id: "home",
        members: [
          {
            id: "alice",
            identities: [
              { channel: "telegram", peer: "123456789" },
              { channel: "whatsapp", peer: "+4712345678" },
            ],
          },
          { id: "bob", identities: [{ channel: "matrix", peer: "@bob:matrix.org" }] },
          { id: "carol" },
        ],
      },
    });
    expect(result).toEqual(expect.objectContaining({ valid: true, warnings: [] }));
  });

  it("stays valid with the spec's gateway options set", async () => {
    const result = await validate({
      gateway: { sandbox: "non-main", dmScope: "per-peer", queueMode: "steer", agents: [{ id: "main" }] },
    });
    expect(result.valid).toBe(true);
  });

  it("is valid with Telegram and Discord bots whose tokens are environment SecretRefs, for the household only", async () => {
    const result = await validate(channelsSpec(), tokensFound);
    expect(result.valid).toBe(true);
    expect(result.warnings).toEqual([discordNotInstalled]);
    // Telegram alone, a bundled channel: no warning at all.
    const telegramOnly = await validate(channelsSpec(), { channelTokenVersions: { telegram: "1" } });
    expect(telegramOnly).toEqual(expect.objectContaining({ valid: true, warnings: [] }));
  });

  it("is valid with channels and several agents, the first owning each channel's account", async () => {
    const result = await validate(
      channelsSpec({ agents: [{ id: "main" }, { id: "reader", model: "smollm2-135m-fewshot" }] }),
      tokensFound,
    );
    expect(result.valid).toBe(true);
    expect(result.warnings).toEqual([discordNotInstalled]);
  });

  it("is valid, without warnings, with a second agent on a model of its own", async () => {
    const result = await validate({
      gateway: { agents: [{ id: "main" }, { id: "reader", model: "smollm2-135m-fewshot" }] },
    });
    expect(result).toEqual(expect.objectContaining({ valid: true, warnings: [] }));
  });
});
