import { memoryToolNames } from "@remram/contract";
import { pluginConfigJsonSchema } from "../config.js";
import { pluginId } from "../plugin.js";

/**
 * openclaw.plugin.json, read by the gateway before any plugin code runs: the id under
 * `plugins.entries.<id>`, start-up activation (hooks plugins are not loaded lazily), and the config's JSON
 * Schema generated from the zod schema in config.ts.
 */
export function buildManifest(version: string): Record<string, unknown> {
  return {
    id: pluginId,
    name: "Remram",
    description:
      "Remram for OpenClaw: model escalation, knowledge injection from Cortex, durable tool-result capture, background reflection, session transcripts into the archive and the memory tools.",
    version,
    activation: { onStartup: true },
    // The memory slot (plugins.slots.memory: "remram-hooks"): Remram is the memory, so OpenClaw's own stays off;
    // a kind-"memory" plugin is disabled by the gateway unless the slot names it.
    kind: "memory",
    contracts: { tools: [...memoryToolNames] },
    configSchema: pluginConfigJsonSchema(),
  };
}

export function renderManifest(version: string): string {
  return `${JSON.stringify(buildManifest(version), null, 2)}\n`;
}
