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
      "Remram for OpenClaw: model escalation, knowledge injection from Cortex, durable tool-result capture and background reflection.",
    version,
    activation: { onStartup: true },
    configSchema: pluginConfigJsonSchema(),
  };
}

export function renderManifest(version: string): string {
  return `${JSON.stringify(buildManifest(version), null, 2)}\n`;
}
