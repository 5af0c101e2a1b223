import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CortexFaultProxy, startCortexFaultProxy } from "../../hooks/src/testing/cortex-fault-proxy.js";
import { type CortexProcess, cortexProcess } from "../../hooks/src/testing/cortex-process.js";
import {
  type PluginGateway,
  startPluginGateway,
  writeCortexTokenFile,
} from "../../hooks/src/testing/gateway-fixture.js";
import { startTelegramBotApi, type TelegramBotApi } from "../../hooks/src/testing/telegram-bot-api.js";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { runDir } from "../../test/harness/src/paths.js";
import { chatCompletionRequests, promptText } from "../../test/harness/src/services/openai-recorder.js";
import { callGateway, openClawProviderId, sendMessage } from "../../test/harness/src/services/openclaw.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { channelTokenEnv } from "../src/appliance/openclaw-channels.js";
import { gatewayConfigFor } from "../src/appliance/testing/context.js";

// REMRAM_TESTBED=opensearch,ollama: the gateway config the operator generates for a household, on the real
// OpenClaw gateway with the Remram plugin, the real Cortex and SmolLM2. Members write through OpenClaw's real,
// bundled Telegram channel, which long-polls a local stand-in for the Bot API (hooks/src/testing/telegram-bot-api.ts):
// the sender comes from the Telegram update's from.id, and the session key from OpenClaw's own dmScope and
// session.identityLinks rules, exactly as with api.telegram.org. One test runs the operator's own channel config
// (allowlist of the members, the token from an environment SecretRef).
const ollama = testbedEndpoints("ollama");
const opensearch = testbedEndpoints("opensearch");
const turnTimeoutMs = 300_000;
const testTimeoutMs = 900_000;
const botToken = "700000001:AAremramhouseholdtestbottoken0000000";
const alicePhone = { id: 7001, firstName: "Alice" };
const aliceTablet = { id: 7002, firstName: "Alice" };
const bobPhone = { id: 7003, firstName: "Bob" };
/** Not a member: the bot's DM policy lets anyone write here, but the household's knowledge is not theirs. */
const stranger = { id: 7999, firstName: "Mallory" };

/** The appliance's spec: Alice on two Telegram accounts (phone and tablet), Bob on one. */
const spec = {
  household: {
    id: "home",
    members: [
      {
        id: "alice",
        identities: [
          { channel: "telegram", peer: String(alicePhone.id) },
          { channel: "telegram", peer: String(aliceTablet.id) },
        ],
      },
      { id: "bob", identities: [{ channel: "telegram", peer: String(bobPhone.id) }] },
    ],
  },
};

/** What the operator seeds into the gateway pod, for this spec. */
const generated = gatewayConfigFor(spec) as {
  session: Record<string, unknown>;
  tools: Record<string, unknown>;
  plugins: { entries: { "remram-hooks": { config: { principals: Record<string, unknown> } } } };
};

describe("the operator's gateway config for a household, on a real gateway", () => {
  let cortex: CortexProcess;
  let proxy: CortexFaultProxy;
  let tokenFile: string;
  let cortexRepoFile: string;

  const cortexPost = async (path: string, body: unknown): Promise<void> => {
    const response = await fetch(`${cortex.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${cortex.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`Cortex ${path} answered ${response.status}: ${await response.text()}`);
  };
  /** The operator's settings, plus what the test bed needs: where Cortex and the queue are, SmolLM2 as local. */
  const startGateway = (params: {
    withTools: boolean;
    telegram?: TelegramBotApi;
    /** Replaces the operator's tool policy (tools: {} is OpenClaw's default). */
    tools?: Record<string, unknown>;
    /** The operator's own `channels` section, instead of the open test channel; with the gateway's environment. */
    operatorChannels?: { channels: unknown; env: Record<string, string> };
  }) =>
    startPluginGateway({
      ollama,
      withTools: params.withTools,
      // With tools OpenClaw's prompt outgrows SmolLM2's 8k window: the relay scripts the tool call and answers
      // its result itself, so the model is never asked in the tool test.
      ...(params.withTools ? { contextWindow: 32_768, replyAfterScriptedTool: "Done." } : {}),
      config: ({ metricsPort, queueDir }) => ({
        cortex: { url: proxy.url, tokenFile, retrieveTimeoutMs: 4_000 },
        principals: generated.plugins.entries["remram-hooks"].config.principals,
        escalation: { localProviders: [openClawProviderId] },
        queue: { path: queueDir, drainIntervalMs: 250 },
        // Reflection runs would only compete for the CPU here.
        reflection: { enabled: false },
        metrics: { port: metricsPort },
      }),
      extraConfig: {
        session: generated.session,
        tools: params.tools ?? generated.tools,
        ...(params.operatorChannels === undefined ? {} : { channels: params.operatorChannels.channels }),
        ...(params.telegram === undefined
          ? {}
          : {
              channels: {
                telegram: {
                  enabled: true,
                  botToken,
                  apiRoot: params.telegram.url,
                  dmPolicy: "open",
                  allowFrom: ["*"],
                },
              },
            }),
      },
      ...(params.telegram === undefined && params.operatorChannels === undefined
        ? {}
        : {
            bundledPlugins: ["telegram"],
            env: { OPENCLAW_SKIP_CHANNELS: "0", ...params.operatorChannels?.env },
          }),
    });

  beforeAll(async () => {
    cortex = await cortexProcess({ opensearchUrl: opensearch.url, ollamaUrl: ollama.url });
    await cortex.start();
    proxy = await startCortexFaultProxy(cortex.url);
    tokenFile = writeCortexTokenFile(`household-secrets-${cortex.indexPrefix}`, cortex.token);
    // A file in Cortex's own repository folder (REMRAM_TEST_CORTEX_DATA/workspace; the pod's /data/cortex/repo).
    const cortexRepo = join(runDir, `cortex-${cortex.indexPrefix}`, "workspace");
    mkdirSync(join(cortexRepo, "artifacts"), { recursive: true });
    cortexRepoFile = join(cortexRepo, "artifacts", "household.md");
    writeFileSync(cortexRepoFile, "Draft: the spare key is in the blue flowerpot.\n");
    const fact = (
      key: string,
      scope: "user" | "household",
      owner: Record<string, string>,
      statement: string,
    ) => ({
      kind: "knowledge",
      provenanceKey: key,
      scope,
      owner,
      privacy: scope === "user" ? "private" : "household",
      statement,
      type: "fact",
      source: "user",
      confidence: 0.9,
    });
    await cortexPost("/ingest", {
      events: [
        fact("alice-cat", "user", { userId: "alice", householdId: "home" }, "Alice's cat is called Miso."),
        fact(
          "bob-boat",
          "user",
          { userId: "bob", householdId: "home" },
          "Bob's sailing boat is named Albatross.",
        ),
        fact(
          "home-dentist",
          "household",
          { householdId: "home" },
          "The family dentist is Dr. Berg on Elm Street.",
        ),
      ],
    });
  }, testTimeoutMs);

  afterAll(async () => {
    await proxy?.stop();
    await cortex?.stop();
    if (cortex !== undefined)
      rmSync(join(runDir, `household-secrets-${cortex.indexPrefix}`), { recursive: true, force: true });
  }, testTimeoutMs);

  it(
    "makes both of Alice's Telegram accounts one session and one Cortex user, with the household's knowledge for every member and no one else",
    async () => {
      const telegram = await startTelegramBotApi();
      const gateway = await startGateway({ withTools: false, telegram });
      try {
        const turn = async (from: { id: number; firstName: string }, text: string) => {
          const before = telegram.repliesTo(from.id).length;
          telegram.sendPrivateMessage(botToken, from, text);
          await waitFor(async () => (telegram.repliesTo(from.id).length > before ? true : undefined), {
            what: `the bot's reply to ${from.firstName} (${from.id})`,
            timeoutMs: turnTimeoutMs,
            intervalMs: 500,
          });
        };
        const questions = {
          phone: "What is my cat called? And who is our dentist?",
          tablet: "Remind me of my cat's name and the dentist, please.",
          bob: "What is my boat named, and who is the family dentist?",
          stranger: "Who is the family dentist of this house?",
        };
        await turn(alicePhone, questions.phone);
        await turn(aliceTablet, questions.tablet);
        await turn(bobPhone, questions.bob);
        await turn(stranger, questions.stranger);

        // OpenClaw's own routing: one session for Alice's two accounts, keyed by her member id.
        const listed = (await callGateway(gateway.gateway.endpoints, "sessions.list", {})) as {
          sessions: { key: string; participantCount?: number }[];
        };
        const keys = listed.sessions.map((session) => session.key);
        expect(keys).toContain("agent:main:telegram:direct:alice");
        expect(keys).toContain("agent:main:telegram:direct:bob");
        expect(keys.filter((key) => /700[1-3]/.test(key))).toEqual([]);
        expect(keys).toContain("agent:main:telegram:direct:7999");
        expect(listed.sessions.find((session) => session.key.endsWith(":alice"))?.participantCount).toBe(2);

        // The plugin scoped every Cortex call to the member, in the household.
        const principalsAsked = (question: string) =>
          proxy.requests
            .filter((request) => request.path === "/retrieve")
            .map((request) => request.body as { requestText?: string; principal?: unknown })
            .filter((body) => body.requestText?.includes(question))
            .map((body) => body.principal);
        const alice = { userId: "alice", householdId: "home", agentId: "main" };
        expect(principalsAsked(questions.phone)).toEqual([alice]);
        expect(principalsAsked(questions.tablet)).toEqual([alice]);
        expect(principalsAsked(questions.bob)).toEqual([{ ...alice, userId: "bob" }]);
        expect(principalsAsked(questions.stranger)).toEqual([{ userId: "telegram:7999", agentId: "main" }]);

        // What the model was given: each member's own knowledge and the household's, never another member's.
        const promptFor = (question: string): string => {
          const prompt = chatCompletionRequests(gateway.recorder.requests)
            .map((request) => promptText(request.body))
            .findLast((text) => text.includes(question));
          if (prompt === undefined) throw new Error(`the model never received "${question}"`);
          return prompt;
        };
        for (const question of [questions.phone, questions.tablet]) {
          expect(promptFor(question)).toContain("Alice's cat is called Miso.");
          expect(promptFor(question)).toContain("The family dentist is Dr. Berg");
          expect(promptFor(question)).not.toContain("Albatross");
        }
        expect(promptFor(questions.bob)).toContain("Bob's sailing boat is named Albatross.");
        expect(promptFor(questions.bob)).toContain("The family dentist is Dr. Berg");
        expect(promptFor(questions.bob)).not.toContain("Miso");
        for (const fact of ["Dr. Berg", "Miso", "Albatross"])
          expect(promptFor(questions.stranger)).not.toContain(fact);
      } finally {
        await gateway.stop();
        await telegram.stop();
      }
    },
    testTimeoutMs,
  );

  it(
    "runs the operator's Telegram channel: the bot token from an environment SecretRef, direct messages from members only",
    async () => {
      const telegram = await startTelegramBotApi();
      // What the operator generates for spec.gateway.channels.telegram, the stand-in as the Bot API root; the
      // token reaches the gateway as the variable the SecretRef names (the pod's valueFrom.secretKeyRef).
      const operator = gatewayConfigFor(
        {
          ...spec,
          gateway: {
            channels: {
              telegram: { botTokenSecretRef: { name: "bots", key: "telegram" }, apiRoot: telegram.url },
            },
          },
        },
        { channelTokenVersions: { telegram: "1" } },
      ) as { channels: { telegram: Record<string, unknown> } };
      expect(operator.channels.telegram).toMatchObject({
        botToken: { source: "env", provider: "default", id: channelTokenEnv.telegram },
        dmPolicy: "allowlist",
        allowFrom: [String(alicePhone.id), String(aliceTablet.id), String(bobPhone.id)],
      });
      expect(JSON.stringify(operator)).not.toContain(botToken);
      const gateway = await startGateway({
        withTools: false,
        operatorChannels: { channels: operator.channels, env: { [channelTokenEnv.telegram]: botToken } },
      });
      try {
        // The stranger writes first: by the time Bob's reply is there, the stranger's update has been handled.
        telegram.sendPrivateMessage(botToken, stranger, "Who is the family dentist of this house?");
        const question = "Who is our family dentist?";
        telegram.sendPrivateMessage(botToken, bobPhone, question);
        await waitFor(async () => (telegram.repliesTo(bobPhone.id).length > 0 ? true : undefined), {
          what: `the bot's reply to Bob (${bobPhone.id})`,
          timeoutMs: turnTimeoutMs,
          intervalMs: 500,
        });
        expect(telegram.repliesTo(stranger.id)).toEqual([]);
        // Every Bot API call was made with the token from the environment.
        expect(new Set(telegram.calls.map((call) => call.token))).toEqual(new Set([botToken]));
        const listed = (await callGateway(gateway.gateway.endpoints, "sessions.list", {})) as {
          sessions: { key: string }[];
        };
        const keys = listed.sessions.map((session) => session.key);
        expect(keys).toContain("agent:main:telegram:direct:bob");
        expect(keys.filter((key) => key.includes(String(stranger.id)))).toEqual([]);
        // Only Bob's question reached the model.
        const prompts = chatCompletionRequests(gateway.recorder.requests).map((request) =>
          promptText(request.body),
        );
        expect(prompts.some((prompt) => prompt.includes(question))).toBe(true);
        expect(prompts.some((prompt) => prompt.includes("of this house"))).toBe(false);
        // The gateway's own config file holds the reference, never the token.
        const written = readFileSync(
          join(gateway.gateway.endpoints.home, ".openclaw", "openclaw.json"),
          "utf8",
        );
        expect(written).toContain(channelTokenEnv.telegram);
        expect(written).not.toContain(botToken);
      } finally {
        await gateway.stop();
        await telegram.stop();
      }
    },
    testTimeoutMs,
  );

  /**
   * One agent turn whose tool call the relay scripts, whatever the model would choose; returns the tool result
   * the gateway produced, as the model would have read it.
   */
  const toolTurn = async (
    gateway: PluginGateway,
    tool: string,
    args: Record<string, unknown>,
  ): Promise<string> => {
    const marker = `probe-${gateway.relay.toolCallsIssued()}-${Date.now()}`;
    await sendMessage(gateway.gateway.endpoints, {
      text: `${marker} [[tool:${tool} ${JSON.stringify(args)}]]`,
      // The HTTP API's caller holds the gateway token: an owner turn, the most privileged sender there is.
      // A session of its own per probe keeps each prompt small.
      user: `alice-${marker}`,
      timeoutMs: turnTimeoutMs,
    });
    // The request that carries this turn's tool result: a tool message after the user message with the marker.
    let result: { role?: string; content?: unknown } | undefined;
    for (const request of chatCompletionRequests(gateway.recorder.requests)) {
      const messages = (request.body as { messages?: { role?: string; content?: unknown }[] }).messages ?? [];
      const asked = messages.findIndex(
        (message) => message.role === "user" && JSON.stringify(message.content).includes(marker),
      );
      const answered = messages.slice(asked + 1).find((message) => message.role === "tool");
      if (asked >= 0 && answered !== undefined) result = answered;
    }
    if (result === undefined) throw new Error(`no tool result reached the model for ${tool}`);
    return JSON.stringify(result.content);
  };

  it(
    "keeps the Cortex token and Cortex's repository out of reach of the agent's tools",
    async () => {
      const token = readFileSync(tokenFile, "utf8").trim();
      // Without the operator's tool policy (OpenClaw's defaults) the same probes reach both: what the policy stops.
      const unguarded = await startGateway({ withTools: true, tools: {} });
      try {
        expect(await toolTurn(unguarded, "read", { path: tokenFile })).toContain(token);
        expect(unguarded.relay.offeredTools()).toContain("exec");
        expect(await toolTurn(unguarded, "exec", { command: `cat ${cortexRepoFile}` })).toContain(
          "blue flowerpot",
        );
      } finally {
        await unguarded.stop();
      }

      const gateway = await startGateway({ withTools: true });
      try {
        const workspace = join(gateway.gateway.endpoints.home, "workspace");
        writeFileSync(join(workspace, "NOTES.md"), "The plumber comes on Tuesday.\n");
        expect(await toolTurn(gateway, "read", { path: "NOTES.md" })).toContain(
          "The plumber comes on Tuesday.",
        );
        // The tools the gateway offers the model under the operator's policy: no shell, no control plane.
        const offered = gateway.relay.offeredTools();
        expect(offered).toContain("read");
        for (const denied of ["exec", "process", "code_execution", "gateway", "openclaw", "cron"])
          expect(offered, denied).not.toContain(denied);

        // File tools stop at the workspace: the token, Cortex's repository, and a relative path climbing out.
        for (const path of [tokenFile, cortexRepoFile, relative(workspace, tokenFile)]) {
          expect(await toolTurn(gateway, "read", { path }), path).toMatch(/Path escapes sandbox root/);
        }
        // And no shell to read them with: a call to exec finds no such tool.
        expect(await toolTurn(gateway, "exec", { command: `cat ${tokenFile}` })).toMatch(/exec not found/);
        // Nothing the model was ever sent holds the token or the repository's file.
        const everything = JSON.stringify(gateway.recorder.requests.map((request) => request.body));
        expect(everything).not.toContain(token);
        expect(everything).not.toContain("blue flowerpot");
        expect(gateway.relay.toolCallsIssued()).toBe(5);
      } finally {
        await gateway.stop();
      }
    },
    testTimeoutMs,
  );
});
