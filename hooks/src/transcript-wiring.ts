import { memoryToolNames } from "@remram/contract";
import type { PluginConfig } from "./config.js";
import type { CortexClient } from "./cortex-client.js";
import type { InjectionLedger } from "./injected-content.js";
import { memoryToolsFactory } from "./memory-tools.js";
import type { Counters } from "./metrics.js";
import type { HostPluginApi } from "./openclaw-api.js";
import type { PrincipalLookup } from "./principal.js";
import type { Queues } from "./queues.js";
import {
  type TranscriptDeps,
  transcriptSealHook,
  transcriptShutdownHook,
  transcriptStageHook,
} from "./transcript-hooks.js";
import type { TranscriptStaging } from "./transcript-staging.js";

/**
 * Registers the archive side of the plugin on an instance: the transcript hooks (staging on agent_end,
 * before_compaction and before_reset; sealing on session_end) and, as holder of the memory slot, the memory tools.
 * The service delivers the transcript queue (service.ts).
 */
export function registerArchiveHooks(
  api: HostPluginApi,
  deps: {
    config: PluginConfig;
    counters: Counters;
    injected: InjectionLedger;
    principalOf: PrincipalLookup;
    client: CortexClient;
    queues: () => Queues;
    staging: () => TranscriptStaging;
  },
): TranscriptDeps {
  const transcripts: TranscriptDeps = {
    config: deps.config,
    counters: deps.counters,
    injected: deps.injected,
    staging: deps.staging,
    transcriptQueue: () => deps.queues().transcript,
    logger: api.logger,
  };
  api.on("agent_end", transcriptStageHook(transcripts, "agent_end"));
  api.on("before_compaction", transcriptStageHook(transcripts, "before_compaction"));
  api.on("before_reset", transcriptStageHook(transcripts, "before_reset"));
  api.on("session_end", transcriptSealHook(transcripts));
  api.on("gateway_stop", transcriptShutdownHook(transcripts));
  if (deps.config.memoryTools.enabled) {
    api.registerTool(
      memoryToolsFactory({
        config: deps.config,
        client: deps.client,
        principalOf: deps.principalOf,
        counters: deps.counters,
      }),
      { names: [...memoryToolNames] },
    );
  }
  return transcripts;
}
