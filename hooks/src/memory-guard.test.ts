import { describe, expect, it } from "vitest";
import { builtInMemoryConflicts } from "./memory-guard.js";

describe("builtInMemoryConflicts", () => {
  it("flags OpenClaw's defaults, where built-in memory search is on", () => {
    expect(builtInMemoryConflicts({})).toEqual([expect.stringContaining("built-in memory search is on")]);
  });

  it("accepts the generated gateway config with the memory slot off and search disabled", () => {
    expect(
      builtInMemoryConflicts({
        memory: { search: { enabled: false } },
        plugins: { slots: { memory: "none" } },
      }),
    ).toEqual([]);
  });

  it("accepts the memory slot held by this plugin with memory-core disabled, even with built-in search left on", () => {
    const held = { slots: { memory: "remram-hooks" }, entries: { "memory-core": { enabled: false } } };
    expect(builtInMemoryConflicts({ plugins: held })).toEqual([]);
    expect(
      builtInMemoryConflicts({
        plugins: held,
        agents: { entries: { main: { memory: { search: { enabled: true } } } } },
      }),
    ).toEqual([]);
    expect(
      builtInMemoryConflicts({ plugins: { slots: { memory: "remram-hooks" }, deny: ["memory-core"] } }),
    ).toEqual([]);
    // memory-core would still load as the dreaming sidecar of the slot's holder.
    expect(builtInMemoryConflicts({ plugins: { slots: { memory: "remram-hooks" } } })).toEqual([
      expect.stringContaining("plugins.entries.memory-core.enabled to false"),
    ]);
    expect(builtInMemoryConflicts({ plugins: { slots: { memory: "memory-core" } } })).toEqual([
      expect.stringContaining('plugins.slots.memory to "remram-hooks"'),
    ]);
  });

  it("flags an agent that turns search back on and memory-core dreaming", () => {
    const conflicts = builtInMemoryConflicts({
      memory: { search: { enabled: false } },
      agents: { entries: { main: { memory: { search: { enabled: true } } } } },
      plugins: { entries: { "memory-core": { config: { dreaming: { enabled: true } } } } },
    });
    expect(conflicts).toEqual([
      "agents.entries.main.memory.search.enabled is true",
      expect.stringContaining("dreaming.enabled is true"),
    ]);
  });
});
