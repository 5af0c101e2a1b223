/**
 * The agent tools the hooks plugin provides as holder of OpenClaw's memory slot (hooks/src/memory-tools.ts), backed
 * by Cortex. Shared: the plugin registers them, and the operator keeps them allowed when an appliance narrows the
 * agents' tools. Their results are recalled memory: never captured as new knowledge, never archived again.
 */
export const memorySearchTool = "memory_search";
export const memoryGetTool = "memory_get";
export const memoryToolNames: readonly string[] = [memorySearchTool, memoryGetTool];
