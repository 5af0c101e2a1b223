// REMRAM_TESTBED=ollama: the Discord channel as the operator configures it, on the pinned OpenClaw. OpenClaw runs a
// channel plugin only from its own install of the official npm package (a plugin loaded from a path is refused as
// untrusted), so the gateway pod lets the gateway install @openclaw/discord at its first start from a copy of the
// npm cache its image carries, offline (children/gateway.ts). Here the same: the cache hack/install-openclaw.sh seeds
// the same way the image does, npm offline and every proxy a closed port, so any reach for the network fails.
// Discord itself cannot be reached from the test bed: the channel starts, fails to connect, and the gateway stays
// ready (a box whose internet is down still answers its household over the API).
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDir } from "../../test/harness/src/paths.js";
import { openClawNpmCacheSeed, startOpenClaw } from "../../test/harness/src/services/openclaw.js";
import type { OpenClawEndpoints, Started } from "../../test/harness/src/services/types.js";
import { pinned } from "../../test/harness/src/versions.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { channelTokenEnv } from "../src/appliance/openclaw-channels.js";
import { gatewayConfigFor } from "../src/appliance/testing/context.js";

const npmCache = join(runDir, `discord-npm-cache-${process.pid}`);
const botToken = "MTIzNDU2Nzg5MDEyMzQ1Njc4.remram.discord-channel-test-token";
const closed = "http://127.0.0.1:9";
let gateway: Started<OpenClawEndpoints>;

/** The channels section the operator writes for a household member on Discord, the bot token found. */
const operatorChannels = (
  gatewayConfigFor(
    {
      household: {
        id: "home",
        members: [{ id: "alice", identities: [{ channel: "discord", peer: "123456789012345678" }] }],
      },
      gateway: { channels: { discord: { tokenSecretRef: { name: "bots", key: "discord" } } } },
    },
    { channelTokenVersions: { discord: "1" } },
  ) as { channels: unknown }
).channels;

beforeAll(async () => {
  rmSync(npmCache, { recursive: true, force: true });
  mkdirSync(npmCache, { recursive: true });
  // The init container's copy: npm writes into its cache, the image's stays read-only.
  cpSync(openClawNpmCacheSeed(), npmCache, { recursive: true });
  gateway = await startOpenClaw({
    // No turn is sent: a closed port serves as the model.
    provider: { api: "ollama", baseUrl: closed, model: "none" },
    bundledPlugins: ["discord"],
    extraConfig: { channels: operatorChannels },
    env: {
      OPENCLAW_SKIP_CHANNELS: "0",
      [channelTokenEnv.discord]: botToken,
      npm_config_cache: npmCache,
      npm_config_offline: "true",
      npm_config_proxy: closed,
      npm_config_https_proxy: closed,
      HTTP_PROXY: closed,
      HTTPS_PROXY: closed,
    },
  });
}, 240_000);

afterAll(async () => {
  await gateway?.stop();
  rmSync(npmCache, { recursive: true, force: true });
});

describe("the Discord channel on the pinned OpenClaw", () => {
  it("installs OpenClaw's Discord plugin from the seeded npm cache without the network, and starts the channel", async () => {
    const { home } = gateway.endpoints;
    const projects = join(home, ".openclaw", "npm", "projects");
    const installed = readdirSync(projects).map((project) =>
      join(projects, project, "node_modules", "@openclaw", "discord", "package.json"),
    );
    const manifest = installed.find((path) => existsSync(path));
    expect(manifest, `the plugin under ${projects}`).toBeDefined();
    // The version the gateway itself is: the plugin is released with OpenClaw.
    expect(JSON.parse(readFileSync(manifest ?? "", "utf8")).version).toBe(pinned("OPENCLAW_VERSION"));
    // Trusted and running: the provider starts, and only then fails to reach Discord (the gateway's console log).
    const gatewayProcess = gateway.processes[0];
    const log = await waitFor(
      async () => {
        const text = gatewayProcess === undefined ? "" : readFileSync(gatewayProcess.logFile, "utf8");
        return text.includes("[discord] [default] starting provider") ? text : undefined;
      },
      { what: "the Discord provider starting", timeoutMs: 60_000, intervalMs: 1_000 },
    );
    expect(log).not.toMatch(/PluginTrustRefusalError|no channel plugin is installed/);
    // The token is the environment's: never written into the gateway's config.
    expect(readFileSync(join(home, ".openclaw", "openclaw.json"), "utf8")).not.toContain(botToken);
  }, 120_000);

  it("stays ready while Discord cannot be reached", async () => {
    const response = await fetch(`${gateway.endpoints.url}/readyz`);
    expect(response.status).toBe(200);
  });
});
