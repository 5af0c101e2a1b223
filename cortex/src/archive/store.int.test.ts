import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type MemoryDocument, memoryDocumentSchema } from "@remram/contract";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canMount, fillVolume, mountTmpfs, unmount } from "../testing/volumes.js";
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

  it("packs hot and warm documents into one cold bundle, read back through the manifest after a reopen", async () => {
    const store = await ArchiveStore.open(root);
    const docs = ["alpha ".repeat(300), "beta ".repeat(300), "gamma ".repeat(300)].map(transcript);
    const hashes = await Promise.all(docs.map(async (document) => (await store.put(document)).hash));
    await store.moveToWarm(hashes[1] as string);
    expect(await store.moveToCold(hashes)).toBe(3);
    const files = await filesUnder(root);
    expect(files.filter((file) => file.startsWith("cold/"))).toHaveLength(1);
    expect(files.filter((file) => file.startsWith("hot/") || file.startsWith("warm/"))).toEqual([]);
    const reopened = await ArchiveStore.open(root);
    for (const [index, hash] of hashes.entries()) {
      expect(reopened.location(hash)).toMatchObject({ tier: "cold", codec: "zstd" });
      expect(await reopened.get(hash)).toEqual(docs[index]);
    }
    expect(await reopened.findCorrupt()).toEqual([]);
    // Nothing moves twice, and a cold document never moves up.
    expect(await reopened.moveToCold(hashes)).toBe(0);
    expect((await reopened.moveToWarm(hashes[0] as string)).tier).toBe("cold");
    expect((await reopened.put(docs[0] as MemoryDocument)).stored).toBe(false);
  });

  it("erases a bundled document by rewriting its bundle without it, and removes the last bundle with the last member", async () => {
    const store = await ArchiveStore.open(root);
    const keep = transcript("keep this conversation ".repeat(50));
    const forget = transcript("forget this conversation ".repeat(50));
    const kept = (await store.put(keep)).hash;
    const erased = (await store.put(forget)).hash;
    await store.moveToCold([kept, erased]);
    const before = store.location(kept)?.path;
    expect(await store.erase(erased)).toBe(true);
    const after = store.location(kept)?.path;
    expect(after).not.toBe(before);
    const files = await filesUnder(root);
    expect(files).toContain(after);
    expect(files).not.toContain(before);
    await expect(store.get(erased)).rejects.toBeInstanceOf(ArchiveNotFoundError);
    expect(await (await ArchiveStore.open(root)).get(kept)).toEqual(keep);
    expect(await store.erase(kept)).toBe(true);
    expect(await filesUnder(root)).toEqual(["manifest.jsonl"]);
  });

  it("reports a tampered bundle member and removes a bundle no manifest line names on reopen", async () => {
    const store = await ArchiveStore.open(root);
    const { hash } = await store.put(transcript("bundled"));
    await store.moveToCold([hash]);
    const path = join(root, store.location(hash)?.path ?? "");
    const bytes = await readFile(path);
    bytes[bytes.length - 3] = (bytes[bytes.length - 3] ?? 0) ^ 0xff;
    await writeFile(path, bytes);
    await expect(store.get(hash)).rejects.toBeInstanceOf(ArchiveIntegrityError);
    expect(await store.findCorrupt()).toEqual([expect.objectContaining({ hash, ok: false })]);
    const orphan = join(root, "cold", "ff", `${"f".repeat(64)}.bundle`);
    await mkdir(join(root, "cold", "ff"), { recursive: true });
    await writeFile(orphan, "left by a crash");
    await ArchiveStore.open(root);
    expect(await filesUnder(root)).not.toContain(`cold/ff/${"f".repeat(64)}.bundle`);
  });

  it("answers not found for an unknown or malformed hash", async () => {
    const store = await ArchiveStore.open(root);
    await expect(store.getBytes("0".repeat(64))).rejects.toBeInstanceOf(ArchiveNotFoundError);
    await expect(store.getBytes("../../etc/passwd")).rejects.toBeInstanceOf(ArchiveNotFoundError);
  });

  it("keeps a line appended after one a crash or a full disk cut short", async () => {
    const store = await ArchiveStore.open(root);
    const first = await store.put(transcript("first"));
    // What a full volume leaves: the start of a line, no newline.
    await writeFile(
      join(root, "manifest.jsonl"),
      `${await readFile(join(root, "manifest.jsonl"), "utf8")}{"hash":"ab`,
    );
    const reopened = await ArchiveStore.open(root);
    const second = await reopened.put(transcript("second"));
    const again = await ArchiveStore.open(root);
    expect(await again.get(first.hash)).toEqual(transcript("first"));
    expect(await again.get(second.hash)).toEqual(transcript("second"));
  });
});

// A real full volume: a tmpfs of 1 MiB (mounting needs root, as the test machine and CI run).
describe.skipIf(!canMount)("archive store on a volume that fills up", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "remram-archive-full-"));
    await mountTmpfs(root, "1m");
  });
  afterEach(async () => {
    await unmount(root);
    await rm(root, { recursive: true, force: true });
  });

  it("refuses a put with ENOSPC, leaves no part of it and loses nothing, then stores once space is freed", async () => {
    const store = await ArchiveStore.open(root);
    const kept = await store.put(transcript("stored before the volume filled"));
    const before = await filesUnder(root);
    const filler = join(root, "filler");
    await fillVolume(filler);
    const big = transcript("x".repeat(200_000));
    await expect(store.put(big)).rejects.toMatchObject({ code: "ENOSPC" });
    expect(await filesUnder(root)).toEqual([...before, "filler"].sort());
    await expect(store.getBytes(canonicalise(big).hash)).rejects.toBeInstanceOf(ArchiveNotFoundError);
    await rm(filler);
    const stored = await store.put(big);
    expect(stored.stored).toBe(true);
    const reopened = await ArchiveStore.open(root);
    expect(await reopened.get(kept.hash)).toEqual(transcript("stored before the volume filled"));
    expect(await reopened.get(stored.hash)).toEqual(big);
  });
});
