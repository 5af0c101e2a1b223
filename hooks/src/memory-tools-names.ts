/**
 * The agent tools the plugin provides as holder of OpenClaw's memory slot (memory-tools.ts). Their results are
 * recalled memory: never captured as new knowledge, never archived again as part of a later transcript.
 */
export const memorySearchTool = "memory_search";
export const memoryGetTool = "memory_get";
export const memoryToolNames: readonly string[] = [memorySearchTool, memoryGetTool];
