import { z } from "zod";
import { pluginId } from "./log.js";

/**
 * Single retrieval authority: Cortex answers for long-term knowledge, so OpenClaw's built-in memory must be
 * off. Reads only the few gateway config keys that decide it (openclaw 2026.9.6 defaults: memory search on,
 * memory slot "memory-core").
 */

const enabledFlag = z.looseObject({ enabled: z.boolean().optional() }).optional();

const GatewayMemoryConfigSchema = z.looseObject({
  memory: z.looseObject({ search: enabledFlag }).optional(),
  agents: z
    .looseObject({
      entries: z
        .record(z.string(), z.looseObject({ memory: z.looseObject({ search: enabledFlag }).optional() }))
        .optional(),
    })
    .optional(),
  plugins: z
    .looseObject({
      slots: z.looseObject({ memory: z.string().optional() }).optional(),
      deny: z.array(z.string()).optional(),
      entries: z
        .record(
          z.string(),
          z
            .looseObject({
              enabled: z.boolean().optional(),
              config: z.looseObject({ dreaming: enabledFlag }).optional(),
            })
            .optional(),
        )
        .optional(),
    })
    .optional(),
});

/** Problems that make the built-in memory a second retrieval (or dream) authority; empty when it is off. */
export function builtInMemoryConflicts(gatewayConfig: unknown): string[] {
  const parsed = GatewayMemoryConfigSchema.safeParse(gatewayConfig ?? {});
  if (!parsed.success) return ["the gateway config could not be read to check built-in memory"];
  const config = parsed.data;
  // The slot naming this plugin (its manifest's kind "memory") is how Remram holds it; "none" would disable it too.
  const slot = config.plugins?.slots?.memory;
  const slotOff = slot === "none" || slot === pluginId;
  const searchOff = config.memory?.search?.enabled === false;
  const conflicts: string[] = [];
  if (!slotOff && !searchOff) {
    conflicts.push(
      `built-in memory search is on: set memory.search.enabled to false and plugins.slots.memory to "${pluginId}"`,
    );
  }
  if (!slotOff) {
    for (const [agentId, entry] of Object.entries(config.agents?.entries ?? {})) {
      if (entry.memory?.search?.enabled === true) {
        conflicts.push(`agents.entries.${agentId}.memory.search.enabled is true`);
      }
    }
  }
  // With the slot held by another memory plugin, OpenClaw still loads memory-core as a "dreaming sidecar" (its
  // dreaming on by default, configured from the slot holder's entry) unless memory-core is disabled or denied.
  const memoryCoreOff =
    config.plugins?.entries?.["memory-core"]?.enabled === false ||
    config.plugins?.deny?.includes("memory-core") === true;
  if (slot === pluginId && !memoryCoreOff) {
    conflicts.push(
      "memory-core would dream beside Remram as OpenClaw's dreaming sidecar: set plugins.entries.memory-core.enabled to false",
    );
  }
  if (config.plugins?.entries?.["memory-core"]?.config?.dreaming?.enabled === true) {
    conflicts.push(
      "plugins.entries.memory-core.config.dreaming.enabled is true (Remram's dream is the only one)",
    );
  }
  return conflicts;
}
