import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parsePluginConfig } from "./config.js";
import { createCortexClient } from "./cortex-client.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function rotatingBed() {
  const folder = mkdtempSync(join(tmpdir(), "remram-token-"));
  folders.push(folder);
  const tokenFile = join(folder, "token");
  writeFileSync(tokenFile, "gateway-credential-first\n");
  const config = parsePluginConfig({ cortex: { url: "http://cortex.invalid", tokenFile } });
  const sent: string[] = [];
  let accepted = new Set(["gateway-credential-first"]);
  const fakeFetch: typeof fetch = async (_url, init) => {
    const header = new Headers(init?.headers).get("authorization") ?? "";
    sent.push(header.replace(/^Bearer /, ""));
    return new Response("{}", { status: accepted.has(header.replace(/^Bearer /, "")) ? 200 : 401 });
  };
  let clock = 1_000_000;
  const client = createCortexClient(config.cortex, fakeFetch, () => clock);
  const reflect = () => client.ingest([]);
  return {
    sent,
    reflect,
    rotate(value: string, acceptedNow: readonly string[]) {
      writeFileSync(tokenFile, `${value}\n`);
      accepted = new Set(acceptedNow);
    },
    advance(ms: number) {
      clock += ms;
    },
  };
}

describe("the hooks' Cortex credential", () => {
  it("presents a rotated credential within 30 s, so Cortex can end the old one's overlap early", async () => {
    const bed = rotatingBed();
    await bed.reflect();
    // Cortex still takes both values during its overlap window.
    bed.rotate("gateway-credential-second", ["gateway-credential-first", "gateway-credential-second"]);
    await bed.reflect();
    bed.advance(30_000);
    await bed.reflect();
    expect(bed.sent).toEqual([
      "gateway-credential-first",
      "gateway-credential-first",
      "gateway-credential-second",
    ]);
  });

  it("reads the file again at once and retries when Cortex answers 401", async () => {
    const bed = rotatingBed();
    await bed.reflect();
    bed.rotate("gateway-credential-second", ["gateway-credential-second"]);
    const answer = await bed.reflect();
    expect(answer.ok).toBe(true);
    expect(bed.sent).toEqual([
      "gateway-credential-first",
      "gateway-credential-first",
      "gateway-credential-second",
    ]);
  });
});
