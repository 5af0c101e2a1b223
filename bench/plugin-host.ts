/**
 * An in-process stand-in for the OpenClaw gateway around the real Remram hooks plugin, for benchmarks that push
 * hundreds of turns through it: the plugin registers exactly as in the gateway (its hooks, its service and its
 * queues), the host calls the hooks of a turn in the gateway's order, and a reflection run the plugin starts is a
 * chat on the real Ollama held to the delta's JSON schema (what the operator's `ollama-reflect` provider does).
 * What is not the gateway: no agent loop (each turn's reply is given), no channels, no OpenClaw prompt.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Ollama } from "ollama";
import type { PluginConfigInput } from "../hooks/src/config.js";
import type {
  AgentHookContext,
  HookHandlers,
  HostPluginApi,
  HostService,
  SubagentRunParams,
} from "../hooks/src/openclaw-api.js";
import { registerRemramHooks } from "../hooks/src/plugin.js";
import { reflectionResponseFormat } from "../hooks/src/reflection.js";
import { sharedState } from "../hooks/src/shared-state.js";

type Handler = { priority: number; run: (event: never, ctx: never) => unknown };

export interface TurnInput {
  sessionKey: string;
  runId: string;
  user: string;
  assistant: string;
  /** A tool call of the turn and what it returned. */
  tool?: { name: string; output: string; isError: boolean };
}

export interface PluginHost {
  /** One user turn through the plugin's hooks, in the gateway's order; resolves when the hooks have returned. */
  turn(input: TurnInput): Promise<void>;
  /** Waits until every queue of the plugin is empty: reflections run and every write reached Cortex. */
  settle(timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startPluginHost(params: {
  config: PluginConfigInput;
  ollama: Ollama;
  reflectionModel: string;
  /** The reply cap of a reflection run (the operator's floor is 1024). */
  reflectionOutputTokens: number;
}): Promise<PluginHost> {
  const stateDir = mkdtempSync(join(tmpdir(), "remram-plugin-host-"));
  const handlers = new Map<string, Handler[]>();
  const services: HostService[] = [];
  const sessions = new Map<string, unknown[]>();
  const runs = new Map<string, Promise<void>>();
  const schema = (reflectionResponseFormat() as { json_schema: { schema: Record<string, unknown> } })
    .json_schema.schema;
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  let runCounter = 0;

  const reflectionRun = (request: SubagentRunParams): Promise<{ runId: string }> => {
    runCounter += 1;
    const runId = `host-run-${runCounter}`;
    runs.set(
      runId,
      params.ollama
        .chat({
          model: params.reflectionModel,
          messages: [
            ...(request.extraSystemPrompt === undefined
              ? []
              : [{ role: "system", content: request.extraSystemPrompt }]),
            { role: "user", content: request.message },
          ],
          format: schema,
          options: { num_predict: params.reflectionOutputTokens },
        })
        .then((response) => {
          sessions.set(request.sessionKey, [
            { role: "user", content: request.message },
            { role: "assistant", content: response.message.content },
          ]);
        }),
    );
    return Promise.resolve({ runId });
  };

  const api: HostPluginApi = {
    id: "remram-hooks",
    registrationMode: "full",
    config: {
      memory: { search: { enabled: false } },
      plugins: { slots: { memory: "remram-hooks" }, entries: { "memory-core": { enabled: false } } },
    },
    pluginConfig: { ...params.config, queue: { ...params.config.queue, path: join(stateDir, "queue") } },
    logger: quiet,
    runtime: {
      subagent: {
        run: reflectionRun,
        waitForRun: async ({ runId }) => {
          const run = runs.get(runId);
          if (run === undefined) return { status: "error", error: `no run ${runId}` };
          try {
            await run;
            return { status: "ok" };
          } catch (error) {
            return { status: "error", error: error instanceof Error ? error.message : String(error) };
          } finally {
            runs.delete(runId);
          }
        },
        getSessionMessages: async ({ sessionKey }) => ({ messages: sessions.get(sessionKey) ?? [] }),
        deleteSession: async ({ sessionKey }) => {
          sessions.delete(sessionKey);
        },
      },
      state: { resolveStateDir: () => stateDir },
    },
    on: (name, handler, opts) => {
      const list = handlers.get(name) ?? [];
      list.push({ priority: opts?.priority ?? 0, run: handler as Handler["run"] });
      // The gateway runs higher priorities first.
      list.sort((a, b) => b.priority - a.priority);
      handlers.set(name, list);
    },
    registerService: (service) => {
      services.push(service);
    },
    registerTool: () => undefined,
  };
  registerRemramHooks(api);
  for (const service of services) await service.start({ stateDir, logger: quiet });

  const call = async <K extends keyof HookHandlers>(
    name: K,
    event: Parameters<HookHandlers[K]>[0],
    ctx: Parameters<HookHandlers[K]>[1],
  ): Promise<unknown[]> => {
    const results: unknown[] = [];
    for (const handler of handlers.get(name) ?? [])
      results.push(await handler.run(event as never, ctx as never));
    return results;
  };
  const history = new Map<string, unknown[]>();

  return {
    async turn(input) {
      const ctx: AgentHookContext = {
        agentId: "main",
        sessionKey: input.sessionKey,
        runId: input.runId,
        modelProviderId: "ollama",
        trigger: "user",
      };
      const earlier = history.get(input.sessionKey) ?? [];
      await call("before_model_resolve", { prompt: input.user }, ctx);
      await call("before_prompt_build", { prompt: input.user, messages: earlier }, ctx);
      const user = { role: "user", content: [{ type: "text", text: input.user }] };
      const messages: unknown[] = [...earlier, user];
      if (input.tool !== undefined) {
        const toolCallId = `${input.runId}-tool`;
        const result = {
          role: "toolResult",
          toolCallId,
          toolName: input.tool.name,
          content: [{ type: "text", text: input.tool.output }],
          isError: input.tool.isError,
          timestamp: Date.now(),
        };
        await call(
          "tool_result_persist",
          { toolName: input.tool.name, toolCallId, message: result },
          { agentId: "main", sessionKey: input.sessionKey, toolName: input.tool.name, toolCallId },
        );
        messages.push(result);
      }
      messages.push({ role: "assistant", content: [{ type: "text", text: input.assistant }] });
      await call("agent_end", { runId: input.runId, success: true, messages }, ctx);
      history.set(input.sessionKey, messages);
    },
    async settle(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const pending = [...sharedState().queues.values()].reduce((sum, queue) => sum + queue.depth, 0);
        if (pending === 0 && runs.size === 0) return;
        if (Date.now() > deadline) throw new Error(`the plugin's queues still hold ${pending} items`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stop() {
      for (const service of services) await service.stop?.({ stateDir, logger: quiet });
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}
