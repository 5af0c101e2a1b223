import type { PluginDefinition } from "./openclaw-api.js";
import { pluginId, registerRemramHooks } from "./plugin.js";

/**
 * The plugin entry OpenClaw loads (package.json `openclaw.runtimeExtensions` → the bundled dist/index.js).
 * A plain object with the fields of `definePluginEntry`'s options: the host accepts it as is, so the bundle
 * needs nothing from the 330 MB `openclaw` package at runtime.
 */
const remramHooks: PluginDefinition = {
  id: pluginId,
  name: "Remram",
  description:
    "Escalation, knowledge injection from Cortex, durable tool-result capture, background reflection, transcripts into the archive and the memory tools.",
  register: registerRemramHooks,
};

export default remramHooks;
