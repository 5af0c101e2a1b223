// REMRAM_TESTBED=ollama,registry: a private Ollama pulls the test bed's models from the test bed's registry, the way
// the appliance pulls its models, and gets the same model the test bed's Ollama serves.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../inject.js";
import { runDir } from "../paths.js";
import { freePort } from "../ports.js";
import type { ManagedProcess } from "../process.js";
import { startModelRegistry } from "./model-registry.js";
import { startPrivateOllama } from "./ollama.js";
import { pullModel, type TransferLine } from "./ollama-transfer.js";

const registry = testbedEndpoints("registry");
const ollama = testbedEndpoints("ollama");
const manifestMediaType = "application/vnd.docker.distribution.manifest.v2+json";

/** PIDs of live processes whose environment or command line mentions `text` (Linux /proc). */
function processesMentioning(text: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return ["environ", "cmdline"].some((file) =>
          readFileSync(`/proc/${pid}/${file}`, "utf8").includes(text),
        );
      } catch {
        return false; // gone meanwhile, or not ours to read
      }
    })
    .map(Number);
}

/** The layer and config digests of a model in the registry, from its manifest. */
async function registryDigests(reference: string): Promise<string[]> {
  const { repository, tag } = splitReference(reference);
  const response = await fetch(`${registry.url}/v2/${repository}/manifests/${tag}`, {
    headers: { accept: manifestMediaType },
  });
  expect(response.status).toBe(200);
  const manifest = (await response.json()) as { config: { digest: string }; layers: { digest: string }[] };
  return [...manifest.layers.map((layer) => layer.digest), manifest.config.digest];
}

function splitReference(reference: string): { repository: string; tag: string } {
  const path = reference.slice(reference.indexOf("/") + 1);
  const colon = path.lastIndexOf(":");
  return { repository: path.slice(0, colon), tag: path.slice(colon + 1) };
}

async function embed(url: string, model: string, input: string): Promise<number[]> {
  const response = await fetch(`${url}/api/embed`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, input }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  const [vector] = ((await response.json()) as { embeddings: number[][] }).embeddings;
  if (vector === undefined) throw new Error(`no embedding from ${url}`);
  return vector;
}

describe("the test bed's model registry", () => {
  const modelsDir = mkdtempSync(join(tmpdir(), "remram-ollama-fresh-"));
  let fresh: { url: string; server: ManagedProcess };

  beforeAll(async () => {
    fresh = await startPrivateOllama(modelsDir);
  });

  afterAll(async () => {
    await fresh?.server.stop();
    // The embed below started an `ollama runner` child; stopping by process group must have taken it too.
    expect(processesMentioning(modelsDir)).toEqual([]);
    rmSync(modelsDir, { recursive: true, force: true });
  });

  it("holds both test-bed models", async () => {
    for (const reference of [registry.embedModel, registry.chatModel, registry.fewshotModel]) {
      expect((await registryDigests(reference)).length).toBeGreaterThanOrEqual(2);
    }
  });

  it("redirects a blob download to the blob server, which answers Range requests", async () => {
    const [digest] = await registryDigests(registry.embedModel);
    const { repository } = splitReference(registry.embedModel);
    const redirect = await fetch(`${registry.url}/v2/${repository}/blobs/${digest}`, { redirect: "manual" });
    expect(redirect.status).toBe(307);
    const location = redirect.headers.get("location") ?? "";
    expect(location.startsWith(registry.blobUrl)).toBe(true);
    const part = await fetch(location, { headers: { range: "bytes=4-11" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toMatch(/^bytes 4-11\/\d+$/);
    expect((await part.arrayBuffer()).byteLength).toBe(8);
  });

  it("streams a pull into a fresh Ollama: every blob to its total, then verification, manifest, success", async () => {
    const lines = await pullModel({ ollamaUrl: fresh.url, model: registry.embedModel, timeoutMs: 60_000 });
    expect(lines[0]?.status).toBe("pulling manifest");
    expect(lines.slice(-3).map((line) => line.status)).toEqual([
      "verifying sha256 digest",
      "writing manifest",
      "success",
    ]);
    const byDigest = new Map<string, TransferLine[]>();
    for (const line of lines.filter((entry) => entry.digest !== undefined)) {
      byDigest.set(line.digest ?? "", [...(byDigest.get(line.digest ?? "") ?? []), line]);
    }
    expect([...byDigest.keys()].sort()).toEqual((await registryDigests(registry.embedModel)).sort());
    for (const [digest, progress] of byDigest) {
      // "pulling <first 12 hex digits of the digest>", a fixed total, completed never going back, ending at total.
      const hex = digest.replace("sha256:", "").slice(0, 12);
      expect(progress.every((line) => line.status === `pulling ${hex}`)).toBe(true);
      const total = progress[0]?.total ?? 0;
      expect(total).toBeGreaterThan(0);
      expect(progress.every((line) => line.total === total)).toBe(true);
      const completed = progress.map((line) => line.completed ?? 0);
      expect(completed).toEqual([...completed].sort((a, b) => a - b));
      expect(completed.at(-1)).toBe(total);
    }
    const tags = (await (await fetch(`${fresh.url}/api/tags`)).json()) as { models: { name: string }[] };
    expect(tags.models.map((model) => model.name)).toContain(registry.embedModel);
  });

  it("gives the pulled embedding model the same vectors as the test bed's Ollama", async () => {
    const text = "Models reach the appliance through a registry.";
    const pulled = await embed(fresh.url, registry.embedModel, text);
    expect(pulled).toHaveLength(384);
    expect(pulled).toEqual(await embed(ollama.url, ollama.embedModel, text));
  });

  it("ends the pull of a model the registry lacks with an error line, surfaced as a clear error", async () => {
    const absent = registry.embedModel.replace(/\/library\/.*$/, "/library/absent-model:latest");
    const seen: TransferLine[] = [];
    const error = await pullModel({
      ollamaUrl: fresh.url,
      model: absent,
      onLine: (line) => seen.push(line),
    }).then(
      () => new Error("the pull of an absent model succeeded"),
      (reason: unknown) => reason,
    );
    expect(seen.at(-1)?.error).toMatch(/file does not exist|not found/);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain(`ollama pull of ${absent}`);
    expect((error as Error).message).toContain(seen.at(-1)?.error ?? "(no error line)");
  });
});

describe("startModelRegistry", () => {
  let occupied: Server;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    occupied = createServer();
    await new Promise<void>((resolveListening) => occupied.listen(port, "127.0.0.1", resolveListening));
  });

  afterAll(async () => {
    await new Promise<void>((resolveClosed) => occupied.close(() => resolveClosed()));
  });

  it("names a port that is taken", async () => {
    await expect(startModelRegistry({ ollama, port })).rejects.toThrow(
      new RegExp(`model registry: port ${port} on 127.0.0.1 is in use`),
    );
  });

  it("fails a seed that Ollama cannot push with Ollama's reason, and leaves no process", async () => {
    const emptyModelsDir = mkdtempSync(join(tmpdir(), "remram-ollama-empty-"));
    const empty = await startPrivateOllama(emptyModelsDir);
    try {
      const error = await startModelRegistry({ ollama: { ...ollama, url: empty.url } }).then(
        () => new Error("the registry was seeded from an Ollama without models"),
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(Error);
      const message = (error as Error).message;
      expect(message).toMatch(/seeding the model registry failed: .*\/api\/copy.*HTTP 404.*not found/s);
      // The failed instance's registry (its config) and blob server (its storage) live in registry-<port>/.
      const port = /registry-(\d+)\.log \(tail\)/.exec(message)?.[1];
      expect(port, message).toBeDefined();
      expect(processesMentioning(`registry-${port}/`)).toEqual([]);
      expect(existsSync(join(runDir, `registry-${port}`))).toBe(false);
    } finally {
      await empty.server.stop();
      rmSync(emptyModelsDir, { recursive: true, force: true });
    }
  });
});
