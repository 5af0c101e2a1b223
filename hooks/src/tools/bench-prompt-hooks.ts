import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { PluginConfigInput } from "../config.js";
import type { AgentHookContext, HookHandlers, HostPluginApi } from "../openclaw-api.js";
import { registerRemramHooks } from "../plugin.js";

/**
 * Benchmark (not a test): the latency the plugin adds to a user's turn, i.e. before_model_resolve followed by
 * before_prompt_build, measured in-process around the plugin's own handlers. With a healthy Cortex it is the
 * /retrieve round trip plus rendering (goal p95 ≤ 30 ms); with a Cortex that never answers it is the cap
 * (goal ≤ 250 ms). The handlers are registered through a minimal host that only records them: the gateway's
 * own overhead is not part of what is measured.
 *
 * Usage: CORTEX_URL=… CORTEX_TOKEN_FILE=… tsx hooks/src/tools/bench-prompt-hooks.ts [iterations]
 * Prints one JSON object.
 */

interface Registered {
  handlers: Partial<HookHandlers>;
}

function registerWith(config: PluginConfigInput): Registered {
  const handlers: Partial<HookHandlers> = {};
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const api: HostPluginApi = {
    id: "remram-hooks",
    registrationMode: "discovery",
    config: {
      memory: { search: { enabled: false } },
      plugins: { slots: { memory: "remram-hooks" }, entries: { "memory-core": { enabled: false } } },
    },
    pluginConfig: config as Record<string, unknown>,
    logger: quiet,
    runtime: {
      subagent: {
        run: () => Promise.reject(new Error("not in a benchmark")),
        waitForRun: () => Promise.reject(new Error("not in a benchmark")),
        getSessionMessages: () => Promise.reject(new Error("not in a benchmark")),
        deleteSession: () => Promise.resolve(),
      },
      state: { resolveStateDir: () => "/tmp/remram-hooks-bench" },
    },
    on: (name, handler) => {
      Object.assign(handlers, { [name]: handler });
    },
    registerService: () => undefined,
    registerTool: () => undefined,
  };
  registerRemramHooks(api);
  return { handlers };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function measure(registered: Registered, iterations: number, prompts: readonly string[]) {
  const resolveModel = registered.handlers.before_model_resolve;
  const buildPrompt = registered.handlers.before_prompt_build;
  if (resolveModel === undefined || buildPrompt === undefined)
    throw new Error("the plugin registered no prompt hooks");
  const samples: number[] = [];
  let injected = 0;
  for (let index = 0; index < iterations; index += 1) {
    const prompt = prompts[index % prompts.length] ?? "hello";
    const ctx: AgentHookContext = {
      runId: `bench-${index}`,
      agentId: "main",
      sessionKey: "agent:main:openai-user:alice",
    };
    const started = performance.now();
    await resolveModel({ prompt }, ctx);
    const result = await buildPrompt({ prompt, messages: [] }, ctx);
    samples.push(performance.now() - started);
    if (result?.appendSystemContext !== undefined) injected += 1;
  }
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    iterations,
    injected,
    p50Ms: Number(percentile(sorted, 50).toFixed(2)),
    p95Ms: Number(percentile(sorted, 95).toFixed(2)),
    maxMs: Number((sorted.at(-1) ?? Number.NaN).toFixed(2)),
  };
}

const iterations = Number(process.argv[2] ?? 200);
const cortexUrl = process.env.CORTEX_URL;
const tokenFile = process.env.CORTEX_TOKEN_FILE;
const prompts = [
  "What is my cat called?",
  "Remind me what we decided about the photo backup.",
  "Which units do I prefer for recipes?",
  "Plan the weekend trip with the kids.",
];
const principals = { identities: { "openai-user:alice": "alice" } };
const results: Record<string, unknown> = { benchmark: "hooks-prompt-path", timeoutMs: 250 };

if (cortexUrl !== undefined) {
  const healthy = registerWith({
    cortex: { url: cortexUrl, ...(tokenFile === undefined ? {} : { tokenFile }) },
    principals,
    metrics: { mode: "off" },
  });
  await measure(healthy, 10, prompts); // warm-up: connections, JIT
  results.healthy = await measure(healthy, iterations, prompts);
}

// A Cortex that accepts connections and never answers: the added latency must stay at the cap.
const hanging = createServer(() => undefined);
await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", () => resolve()));
const hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
results.hanging = await measure(
  registerWith({ cortex: { url: hangingUrl }, principals, metrics: { mode: "off" } }),
  Math.min(iterations, 40),
  prompts,
);
hanging.closeAllConnections();
hanging.close();
console.log(JSON.stringify(results, null, 2));
