import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type MemoryDocument, memoryDocumentSchema } from "@remram/contract";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canonicalise } from "./document.js";
import { ArchiveIntegrityError, ArchiveNotFoundError, ArchiveStore } from "./store.js";

function transcript(text: string): MemoryDocument {
  return memoryDocumentSchema.parse({
    createdAt: "2026-02-01T10:00:00.000Z",
    source: { sessionId: "s1", channel: "telegram" },
    messages: [{ role: "user", content: text, turnId: "t1" }],
    consentScope: { ownerIds: ["alice"], privacy: "private", allowRecall: true },
  });
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

describe("archive store on a real directory", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "remram-archive-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("stores a document hot under its hash and reads back exactly the canonical bytes", async () => {
    const store = await ArchiveStore.open(root);
    const document = transcript("hello");
    const { hash, stored } = await store.put(document);
    expect(stored).toBe(true);
    expect(hash).toBe(canonicalise(document).hash);
    expect(await filesUnder(root)).toEqual([`hot/${hash.slice(0, 2)}/${hash}.json`, "manifest.jsonl"]);
    expect(await store.getBytes(hash)).toEqual(canonicalise(document).bytes);
    expect(await store.get(hash)).toEqual(document);
  });

  it("stores nothing new when the same content is archived again, even concurrently", async () => {
    const store = await ArchiveStore.open(root);
    const results = await Promise.all([1, 2, 3, 4].map(() => store.put(transcript("same"))));
    expect(new Set(results.map((r) => r.hash)).size).toBe(1);
    expect(results.filter((r) => r.stored)).toHaveLength(1);
    const manifest = (await readFile(join(root, "manifest.jsonl"), "utf8")).trim().split("\n");
    expect(manifest).toHaveLength(1);
  });

  it("moves a document to the zstd and gzip warm tiers, hashing the bytes before compression", async () => {
    const store = await ArchiveStore.open(root);
    const zstd = await store.put(transcript("zstd ".repeat(500)));
    const gzip = await store.put(transcript("gzip ".repeat(500)));
    const zLocation = await store.moveToWarm(zstd.hash, "zstd");
    const gLocation = await store.moveToWarm(gzip.hash, "gzip");
    expect(zLocation.path).toMatch(/\.json\.zst$/);
    expect(gLocation.path).toMatch(/\.json\.gz$/);
    expect((await readFile(join(root, zLocation.path))).length).toBeLessThan(zstd.size);
    expect(await filesUnder(join(root, "hot")).catch(() => [])).toEqual([]);
    expect((await store.get(zstd.hash)).messages[0]?.content).toBe("zstd ".repeat(500));
    expect((await store.get(gzip.hash)).messages[0]?.content).toBe("gzip ".repeat(500));
  });

  it("replays the manifest on reopen, including tier moves", async () => {
    const first = await ArchiveStore.open(root);
    const { hash } = await first.put(transcript("durable"));
    await first.moveToWarm(hash);
    const reopened = await ArchiveStore.open(root);
    expect(reopened.location(hash)?.tier).toBe("warm");
    expect((await reopened.get(hash)).messages[0]?.content).toBe("durable");
    expect((await reopened.put(transcript("durable"))).stored).toBe(false);
  });

  it("detects and reports a stored file that no longer matches its hash, and never serves it", async () => {
    const store = await ArchiveStore.open(root);
    const { hash } = await store.put(transcript("original"));
    const path = join(root, store.location(hash)?.path ?? "");
    await writeFile(path, (await readFile(path, "utf8")).replace("original", "tampered"));
    await expect(store.get(hash)).rejects.toBeInstanceOf(ArchiveIntegrityError);
    await expect(store.put(transcript("original"))).rejects.toBeInstanceOf(ArchiveIntegrityError);
    expect(await store.findCorrupt()).toEqual([expect.objectContaining({ hash, ok: false })]);
  });

  it("adopts an intact file a crash left without a manifest line, and rejects a corrupt one", async () => {
    const store = await ArchiveStore.open(root);
    const { hash } = await store.put(transcript("orphan"));
    await writeFile(join(root, "manifest.jsonl"), "");
    const reopened = await ArchiveStore.open(root);
    expect(await reopened.put(transcript("orphan"))).toMatchObject({ hash, stored: false });
    expect((await reopened.verify(hash)).ok).toBe(true);
  });

  it("really removes erased documents and records the erasure", async () => {
    const store = await ArchiveStore.open(root);
    const { hash } = await store.put(transcript("forget me"));
    await store.moveToWarm(hash);
    expect(await store.erase(hash)).toBe(true);
    await expect(store.get(hash)).rejects.toBeInstanceOf(ArchiveNotFoundError);
    expect(await filesUnder(root)).toEqual(["manifest.jsonl"]);
    expect((await ArchiveStore.open(root)).location(hash)).toBeUndefined();
    expect(await store.erase(hash)).toBe(false);
  });

  it("answers not found for an unknown or malformed hash", async () => {
    const store = await ArchiveStore.open(root);
    await expect(store.getBytes("0".repeat(64))).rejects.toBeInstanceOf(ArchiveNotFoundError);
    await expect(store.getBytes("../../etc/passwd")).rejects.toBeInstanceOf(ArchiveNotFoundError);
  });
});
