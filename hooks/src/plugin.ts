import { type PluginConfig, parsePluginConfig } from "./config.js";
import { createCortexClient } from "./cortex-client.js";
import { reflectionTriggerHook } from "./hooks/agent-end.js";
import { escalationHook } from "./hooks/before-model-resolve.js";
import { injectionHook } from "./hooks/before-prompt-build.js";
import { cortexRetriever } from "./hooks/retrieve.js";
import { captureHook } from "./hooks/tool-result-persist.js";
import { errorMessage, logEvent, pluginId } from "./log.js";
import { builtInMemoryConflicts } from "./memory-guard.js";
import type { HostPluginApi } from "./openclaw-api.js";
import { derivePrincipal, type PrincipalLookup } from "./principal.js";
import { openQueues, type Queues } from "./queues.js";
import { startBackgroundWork } from "./service.js";
import { sharedState } from "./shared-state.js";

export { pluginId };

/**
 * register() must stay synchronous and free of side effects beyond registrations: it runs once per plugin
 * instance, and several instances live in one gateway. Timers and sockets start only in the service.
 */
export function registerRemramHooks(api: HostPluginApi): void {
  let config: PluginConfig;
  try {
    config = parsePluginConfig(api.pluginConfig);
  } catch (error) {
    logEvent(api.logger, "error", "config_invalid", { message: errorMessage(error) });
    return;
  }
  const conflicts = builtInMemoryConflicts(api.config);
  if (conflicts.length > 0 && !config.allowBuiltInMemory) {
    // Refuse to run beside a second retrieval authority; registering nothing keeps the gateway itself up.
    logEvent(api.logger, "error", "refusing_to_start", {
      message:
        "remram-hooks refuses to start: OpenClaw's built-in memory would be a second retrieval authority. " +
        `${conflicts.join("; ")}. Or set plugins.entries.${pluginId}.config.allowBuiltInMemory to true.`,
    });
    return;
  }

  const state = sharedState();
  const counters = state.counters;
  const client = createCortexClient(config.cortex);
  const stateDir = api.runtime.state.resolveStateDir();
  let queues: Queues | undefined;
  // Opened on first use, not in register(): discovery passes that never see a turn touch no disk.
  const getQueues = (): Queues => {
    queues ??= openQueues(state, config, stateDir);
    return queues;
  };
  const principalOf: PrincipalLookup = (ctx) =>
    derivePrincipal(ctx, config.principals, config.injection.groupSessions);
  const retrieve = cortexRetriever(client, config.injection, counters.retrieveLatency);
  const logger = api.logger;

  api.on("before_model_resolve", escalationHook({ config, state, principalOf, retrieve, logger }));
  api.on("before_prompt_build", injectionHook({ config, state, principalOf, retrieve, logger }));
  api.on(
    "tool_result_persist",
    captureHook({
      config,
      counters,
      injected: state.injected,
      principalOf,
      captureQueue: () => getQueues().capture,
      logger,
    }),
  );
  api.on(
    "agent_end",
    reflectionTriggerHook({
      config,
      counters,
      injected: state.injected,
      principalOf,
      reflectionQueue: () => getQueues().reflection,
      logger,
    }),
  );

  api.registerService({
    id: pluginId,
    reload: { configPrefixes: [`plugins.entries.${pluginId}`] },
    start: async (ctx) => {
      await state.service?.stop();
      state.service = startBackgroundWork({
        api,
        logger: ctx.logger,
        config,
        client,
        state,
        queues: getQueues(),
      });
    },
    stop: async () => {
      await state.service?.stop();
      state.service = undefined;
    },
  });
}
