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
