import { z } from "zod";

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
      entries: z
        .record(
          z.string(),
          z.looseObject({ config: z.looseObject({ dreaming: enabledFlag }).optional() }).optional(),
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
  const slotOff = config.plugins?.slots?.memory === "none";
  const searchOff = config.memory?.search?.enabled === false;
  const conflicts: string[] = [];
  if (!slotOff && !searchOff) {
    conflicts.push(
      'built-in memory search is on: set memory.search.enabled to false and plugins.slots.memory to "none"',
    );
  }
  if (!slotOff) {
    for (const [agentId, entry] of Object.entries(config.agents?.entries ?? {})) {
      if (entry.memory?.search?.enabled === true) {
        conflicts.push(`agents.entries.${agentId}.memory.search.enabled is true`);
      }
    }
  }
  if (config.plugins?.entries?.["memory-core"]?.config?.dreaming?.enabled === true) {
    conflicts.push(
      "plugins.entries.memory-core.config.dreaming.enabled is true (Remram's dream is the only one)",
    );
  }
  return conflicts;
}
