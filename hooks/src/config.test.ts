import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parsePluginConfig } from "./config.js";
import { buildManifest } from "./tools/manifest.js";
import { hooksRoot, manifestPath } from "./tools/paths.js";

describe("plugin config", () => {
  it("fills every default from an empty config, with a 250 ms retrieve cap", () => {
    const config = parsePluginConfig({});
    expect(config.cortex.retrieveTimeoutMs).toBe(250);
    expect(config.injection.tokenCeiling).toBe(1200);
    expect(config.queue.dropPolicy).toBe("drop-oldest");
    expect(config.allowBuiltInMemory).toBe(false);
  });

  it("names the offending field when a value is out of bounds", () => {
    expect(() => parsePluginConfig({ cortex: { retrieveTimeoutMs: 0 } })).toThrow(
      /cortex\.retrieveTimeoutMs/,
    );
  });

  it("rejects unknown keys instead of ignoring a typo", () => {
    expect(() => parsePluginConfig({ injection: { tokenCieling: 10 } })).toThrow(/injection/);
  });
});

describe("openclaw.plugin.json", () => {
  it("matches the manifest generated from the zod schema (run `npm run manifest -w hooks` after a change)", () => {
    const { version } = JSON.parse(readFileSync(join(hooksRoot, "package.json"), "utf8")) as {
      version: string;
    };
    expect(JSON.parse(readFileSync(manifestPath, "utf8"))).toEqual(buildManifest(version));
  });

  it("closes every object in the config schema so the gateway rejects unknown keys", () => {
    const schema = JSON.stringify(buildManifest("0.0.0").configSchema);
    const objects = (schema.match(/"type":"object","properties"/g) ?? []).length;
    const closed = (schema.match(/"additionalProperties":false/g) ?? []).length;
    expect(objects).toBeGreaterThan(5);
    expect(closed).toBe(objects);
  });
});
