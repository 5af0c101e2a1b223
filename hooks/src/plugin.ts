import { type PluginConfig, parsePluginConfig } from "./config.js";
import { createCortexClient } from "./cortex-client.js";
import { type ExplicitSaveDeps, explicitSaveReplyHook, explicitSaveStartHook } from "./explicit-save-hook.js";
import { reflectionTriggerHook } from "./hooks/agent-end.js";
import { escalationHook } from "./hooks/before-model-resolve.js";
import { injectionHook } from "./hooks/before-prompt-build.js";
import { cortexRetriever } from "./hooks/retrieve.js";
import { captureHook } from "./hooks/tool-result-persist.js";
import { errorMessage, logEvent, pluginId } from "./log.js";
import { builtInMemoryConflicts } from "./memory-guard.js";
import type { HostPluginApi } from "./openclaw-api.js";
import { derivePrincipal, type PrincipalLookup } from "./principal.js";
import { openQueues, type Queues, transcriptStagingDir } from "./queues.js";
import { startBackgroundWork } from "./service.js";
import { sharedState } from "./shared-state.js";
import { TranscriptStaging } from "./transcript-staging.js";
import { registerArchiveHooks } from "./transcript-wiring.js";

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
  const retrieve = cortexRetriever(
    client,
    config.injection,
    counters.retrieveLatency,
    config.escalation.allowPrivateToCloud,
  );
  const logger = api.logger;

  api.on("before_model_resolve", escalationHook({ config, state, principalOf, retrieve, logger }));
  api.on("before_prompt_build", injectionHook({ config, state, principalOf, retrieve, logger }));
  // "remember that …": stored while the session loads (started first), reported after the knowledge block.
  const saves: ExplicitSaveDeps = {
    config,
    counters,
    injected: state.injected,
    principalOf,
    client,
    saveQueue: () => getQueues().explicitSave,
    logger,
  };
  api.on("before_model_resolve", explicitSaveStartHook(saves), { priority: 1 });
  api.on("before_prompt_build", explicitSaveReplyHook(saves));
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
      reflectionTargets: state.reflectionTargets,
      principalOf,
      reflectionQueue: () => getQueues().reflection,
      logger,
    }),
  );

  // Transcripts into the archive on session_end, and the memory tools (transcript-wiring.ts).
  let staging: TranscriptStaging | undefined;
  const transcripts = registerArchiveHooks(api, {
    config,
    counters,
    injected: state.injected,
    principalOf,
    client,
    queues: getQueues,
    staging: () => {
      staging ??= new TranscriptStaging(transcriptStagingDir(config, stateDir));
      return staging;
    },
  });

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
        transcripts,
      });
    },
    stop: async () => {
      await state.service?.stop();
      state.service = undefined;
    },
  });
}
