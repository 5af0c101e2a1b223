import { randomBytes } from "node:crypto";
import { appendFile, link, mkdir, open, readdir, readFile, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { gunzip, gzip, zstdCompress, zstdDecompress } from "node:zlib";
import { type MemoryDocument, memoryDocumentSchema } from "@remram/contract";
import { type BundleMember, bundlePath, packBundle, sliceBundle } from "./cold.js";
import { canonicalise, sha256Hex } from "./document.js";
import { ArchiveIntegrityError, ArchiveNotFoundError, isErrno, type VerifyResult } from "./store-errors.js";

export { ArchiveIntegrityError, ArchiveNotFoundError, type VerifyResult };

/**
 * The hash-addressed archive on disk (seed 004's storage lifecycle): hot per-hash JSON files, a warm tier of
 * per-hash compressed files, a cold tier of bundles holding many compressed documents (cold.ts), and an
 * append-only manifest mapping hash → location. Files are written once, under a name derived from their content,
 * with link(2) so a second writer can never replace the first; every read re-hashes what it read, so a file that
 * no longer matches its hash is reported, never served. When documents move is tiering.ts's rule.
 */

export type WarmCodec = "zstd" | "gzip";
export type Tier = "hot" | "warm" | "cold";

export interface ArchiveLocation {
  tier: Tier;
  /** Relative to the archive root: the document's own file, or (cold) its bundle. */
  path: string;
  codec?: WarmCodec | undefined;
  /** Size of the canonical (uncompressed) bytes. */
  size: number;
  /** Cold only: where the document's compressed bytes lie in its bundle. */
  offset?: number | undefined;
  length?: number | undefined;
}

type ManifestEntry =
  | ({ hash: string; at: string } & ArchiveLocation)
  | { hash: string; at: string; erased: true };

const hashPattern = /^[a-f0-9]{64}$/;
const compress = { zstd: promisify(zstdCompress), gzip: promisify(gzip) };
const decompress = { zstd: promisify(zstdDecompress), gzip: promisify(gunzip) };
const extension: Record<WarmCodec, string> = { zstd: ".json.zst", gzip: ".json.gz" };

export class ArchiveStore {
  private readonly locations = new Map<string, ArchiveLocation>();
  /** When each document was first archived (its first manifest line), for the tier rules. */
  private readonly archivedAt = new Map<string, string>();
  /** Bundles are written and rewritten one at a time; taken after any per-hash lock, never before. */
  private bundleQueue: Promise<unknown> = Promise.resolve();
  /** One write per hash at a time inside this process; link(2) settles races with other processes. */
  private readonly inFlight = new Map<string, Promise<unknown>>();
  /**
   * The manifest may end in a line cut short (a crash, a full disk): the next line starts on a line of its own,
   * or it would be glued to the fragment and lost with it at the next start.
   */
  private manifestCutShort = false;

  private constructor(
    readonly root: string,
    private readonly now: () => Date,
  ) {}

  /** Open (creating if needed) an archive rooted at `root`, replaying its manifest. */
  static async open(root: string, now: () => Date = () => new Date()): Promise<ArchiveStore> {
    const store = new ArchiveStore(root, now);
    await mkdir(root, { recursive: true });
    let manifest = "";
    try {
      manifest = await readFile(store.manifestPath, "utf8");
    } catch (error) {
      if (!isErrno(error, "ENOENT")) throw error;
    }
    store.manifestCutShort = manifest !== "" && !manifest.endsWith("\n");
    for (const line of manifest.split("\n")) {
      if (line.trim() === "") continue;
      let entry: ManifestEntry;
      try {
        entry = JSON.parse(line) as ManifestEntry;
      } catch {
        continue; // a line cut short by a crash; the file it named is found again on the next put
      }
      if ("erased" in entry) {
        store.locations.delete(entry.hash);
        store.archivedAt.delete(entry.hash);
      } else {
        store.locations.set(entry.hash, {
          tier: entry.tier,
          path: entry.path,
          codec: entry.codec,
          size: entry.size,
          ...(entry.tier === "cold" ? { offset: entry.offset, length: entry.length } : {}),
        });
        if (!store.archivedAt.has(entry.hash)) store.archivedAt.set(entry.hash, entry.at);
      }
    }
    await store.removeOrphanBundles();
    return store;
  }

  /**
   * Bundles no manifest line points at: left by a crash while a bundle was written or rewritten. An erasure's
   * rewrite leaves the old bundle until its last step, so removing it here completes a crashed erasure.
   */
  private async removeOrphanBundles(): Promise<void> {
    const used = new Set([...this.locations.values()].map((location) => location.path));
    let files: string[];
    try {
      files = await readdir(join(this.root, "cold"), { recursive: true });
    } catch (error) {
      if (isErrno(error, "ENOENT")) return;
      throw error;
    }
    for (const file of files) {
      const relative = join("cold", file);
      if (file.endsWith(".bundle") && !used.has(relative))
        await rm(join(this.root, relative), { force: true });
    }
  }

  private get manifestPath(): string {
    return join(this.root, "manifest.jsonl");
  }

  private hotPath(hash: string): string {
    return join("hot", hash.slice(0, 2), `${hash}.json`);
  }

  private warmPath(hash: string, codec: WarmCodec): string {
    return join("warm", hash.slice(0, 2), `${hash}${extension[codec]}`);
  }

  location(hash: string): ArchiveLocation | undefined {
    return this.locations.get(hash);
  }

  /** Every stored document with its location and archiving time, in hash order. */
  entries(): { hash: string; location: ArchiveLocation; archivedAt: string }[] {
    return [...this.locations.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([hash, location]) => ({ hash, location, archivedAt: this.archivedAt.get(hash) ?? "" }));
  }

  get size(): number {
    return this.locations.size;
  }

  private async record(entry: ManifestEntry): Promise<void> {
    const line = `${this.manifestCutShort ? "\n" : ""}${JSON.stringify(entry)}\n`;
    try {
      await appendFile(this.manifestPath, line, "utf8");
      this.manifestCutShort = false;
    } catch (error) {
      // Part of the line may be on disk (a full volume takes what fits): an empty line is harmless, a glued one not.
      this.manifestCutShort = true;
      throw error;
    }
  }

  private exclusive<T>(hash: string, work: () => Promise<T>): Promise<T> {
    const previous = this.inFlight.get(hash) ?? Promise.resolve();
    const next = previous.then(work, work);
    this.inFlight.set(hash, next);
    return next.finally(() => {
      if (this.inFlight.get(hash) === next) this.inFlight.delete(hash);
    });
  }

  /** Several hashes at once, locked in sorted order so two callers can never wait on each other. */
  private exclusiveAll<T>(hashes: readonly string[], work: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(hashes)].sort().reverse();
    return sorted.reduce<() => Promise<T>>((inner, hash) => () => this.exclusive(hash, inner), work)();
  }

  private bundling<T>(work: () => Promise<T>): Promise<T> {
    const next = this.bundleQueue.then(work, work);
    this.bundleQueue = next.catch(() => undefined);
    return next;
  }

  /** Write bytes durably under `relative`, never replacing an existing file; false when one was there already. */
  private async writeOnce(relative: string, bytes: Uint8Array): Promise<boolean> {
    const target = join(this.root, relative);
    await mkdir(dirname(target), { recursive: true });
    const temporary = `${target}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    const handle = await open(temporary, "wx");
    try {
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await link(temporary, target);
      return true;
    } catch (error) {
      if (isErrno(error, "EEXIST")) return false;
      throw error;
    } finally {
      // Also after a failed write: a full volume must not keep the part that fitted.
      await rm(temporary, { force: true });
    }
  }

  private async readStored(location: ArchiveLocation): Promise<Buffer> {
    if (location.tier !== "cold") return readFile(join(this.root, location.path));
    const handle = await open(join(this.root, location.path), "r");
    try {
      const length = location.length ?? 0;
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, location.offset ?? 0);
      return buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  }

  private async readCanonical(hash: string, location: ArchiveLocation): Promise<Buffer> {
    const raw = await this.readStored(location);
    let bytes: Buffer;
    try {
      bytes = location.tier !== "hot" && location.codec ? await decompress[location.codec](raw) : raw;
    } catch {
      // A cut or overwritten compressed file: it cannot be what the hash addresses.
      throw new ArchiveIntegrityError(hash, location.path, sha256Hex(raw));
    }
    const actual = sha256Hex(bytes);
    if (actual !== hash) throw new ArchiveIntegrityError(hash, location.path, actual);
    return bytes;
  }

  /**
   * Store a document under the hash of its canonical bytes. Storing the same content again stores nothing and
   * returns the same hash; finding a different file under that hash is reported as an integrity error.
   */
  async put(document: MemoryDocument): Promise<{ hash: string; stored: boolean; size: number }> {
    const { bytes, hash } = canonicalise(document);
    return this.storeCanonical(hash, bytes, () => this.now().toISOString());
  }

  /**
   * A document from a backup: its canonical bytes, under the hash they must have, with its first archiving time
   * (the tier rules age it from then). Stores nothing when the hash is already held.
   */
  async restore(hash: string, bytes: Buffer, archivedAt: string): Promise<{ stored: boolean }> {
    const actual = sha256Hex(bytes);
    if (!hashPattern.test(hash) || actual !== hash)
      throw new ArchiveIntegrityError(hash, "the backup", actual);
    return this.storeCanonical(hash, bytes, () => archivedAt);
  }

  private storeCanonical(
    hash: string,
    bytes: Uint8Array,
    archivedAt: () => string,
  ): Promise<{ hash: string; stored: boolean; size: number }> {
    return this.exclusive(hash, async () => {
      const known = this.locations.get(hash);
      if (known) {
        await this.readCanonical(hash, known);
        return { hash, stored: false, size: bytes.length };
      }
      const location: ArchiveLocation = { tier: "hot", path: this.hotPath(hash), size: bytes.length };
      const written = await this.writeOnce(location.path, bytes);
      // A file without a manifest line is left by a crash between the two writes: adopt it if it is intact.
      if (!written) await this.readCanonical(hash, location);
      const at = archivedAt();
      // Known only once the manifest says so: a put that fails here was never acknowledged.
      await this.record({ hash, at, ...location });
      this.locations.set(hash, location);
      this.archivedAt.set(hash, at);
      return { hash, stored: written, size: bytes.length };
    });
  }

  /** The canonical bytes stored under a hash, verified against it. */
  async getBytes(hash: string): Promise<Buffer> {
    for (let attempt = 0; ; attempt += 1) {
      const location = hashPattern.test(hash) ? this.locations.get(hash) : undefined;
      if (!location) throw new ArchiveNotFoundError(hash);
      try {
        return await this.readCanonical(hash, location);
      } catch (error) {
        // Moved to another tier (or its bundle rewritten) between the lookup and the read: look it up again.
        if (attempt > 0 || !isErrno(error, "ENOENT") || this.locations.get(hash) === location) throw error;
      }
    }
  }

  async get(hash: string): Promise<MemoryDocument> {
    const parsed: unknown = JSON.parse((await this.getBytes(hash)).toString("utf8"));
    const { hashAlgo: _algorithm, ...document } = parsed as Record<string, unknown>;
    return memoryDocumentSchema.parse(document);
  }

  /** Move a hot document to the warm tier: compress, write, record, then drop the hot file. */
  async moveToWarm(hash: string, codec: WarmCodec = "zstd"): Promise<ArchiveLocation> {
    return this.exclusive(hash, async () => {
      const current = this.locations.get(hash);
      if (!current) throw new ArchiveNotFoundError(hash);
      // Tiers only move down: a cold document stays in its bundle.
      if (current.tier !== "hot") return current;
      const bytes = await this.readCanonical(hash, current);
      const location: ArchiveLocation = {
        tier: "warm",
        path: this.warmPath(hash, codec),
        codec,
        size: bytes.length,
      };
      const written = await this.writeOnce(location.path, await compress[codec](bytes));
      if (!written) await this.readCanonical(hash, location);
      this.locations.set(hash, location);
      await this.record({ hash, at: this.now().toISOString(), ...location });
      await rm(join(this.root, current.path), { force: true });
      return location;
    });
  }

  /** Re-hash one stored document and say whether it still matches. */
  async verify(hash: string): Promise<VerifyResult> {
    const location = this.locations.get(hash);
    if (!location) return { hash, ok: false, location: "", problem: "not in the manifest" };
    try {
      await this.readCanonical(hash, location);
      return { hash, ok: true, location: location.path };
    } catch (error) {
      return {
        hash,
        ok: false,
        location: location.path,
        problem: error instanceof Error ? error.message : String(error),
      };
    }
  }

  /** Every stored document that is missing or no longer matches its hash. */
  async findCorrupt(): Promise<VerifyResult[]> {
    const results: VerifyResult[] = [];
    for (const hash of [...this.locations.keys()].sort()) {
      const result = await this.verify(hash);
      if (!result.ok) results.push(result);
    }
    return results;
  }

  /**
   * Erasure on request (the admin path): the bytes are really removed from every tier, and the manifest
   * records that they were. Returns false when nothing was stored under the hash.
   */
  async erase(hash: string): Promise<boolean> {
    return this.exclusive(hash, async () => {
      const location = this.locations.get(hash);
      if (!location) return false;
      if (location.tier === "cold") return this.bundling(() => this.eraseFromBundle(hash));
      await rm(join(this.root, this.hotPath(hash)), { force: true });
      for (const codec of ["zstd", "gzip"] as const) {
        await rm(join(this.root, this.warmPath(hash, codec)), { force: true });
      }
      this.locations.delete(hash);
      this.archivedAt.delete(hash);
      await this.record({ hash, at: this.now().toISOString(), erased: true });
      return true;
    });
  }

  /** Write a bundle of these members (compressed already) and record each one's new place in it. */
  private async writeBundle(members: readonly BundleMember[]): Promise<number> {
    const { bytes, slices } = packBundle(members);
    const path = bundlePath(sha256Hex(bytes));
    await this.writeOnce(path, bytes);
    const at = this.now().toISOString();
    for (const slice of slices) {
      const location: ArchiveLocation = {
        tier: "cold",
        path,
        codec: "zstd",
        size: slice.size,
        offset: slice.offset,
        length: slice.length,
      };
      this.locations.set(slice.hash, location);
      await this.record({ hash: slice.hash, at, ...location });
    }
    return slices.length;
  }

  /**
   * Pack documents into one cold bundle: each is read and verified where it lies, compressed, written into the
   * bundle, recorded, and only then its hot or warm file removed. Documents gone or already cold are skipped.
   */
  async moveToCold(hashes: readonly string[]): Promise<number> {
    return this.exclusiveAll(hashes, () =>
      this.bundling(async () => {
        const members: BundleMember[] = [];
        const previous: ArchiveLocation[] = [];
        for (const hash of [...new Set(hashes)].sort()) {
          const current = this.locations.get(hash);
          if (!current || current.tier === "cold") continue;
          const bytes = await this.readCanonical(hash, current);
          members.push({ hash, compressed: await compress.zstd(bytes), size: bytes.length });
          previous.push(current);
        }
        if (members.length === 0) return 0;
        const moved = await this.writeBundle(members);
        for (const location of previous) await rm(join(this.root, location.path), { force: true });
        return moved;
      }),
    );
  }

  /**
   * Erase one member of a bundle: the other members go into a new bundle (their bytes copied unchanged), the
   * erasure is recorded, and the old bundle, the only place the erased bytes still were, is removed last.
   */
  private async eraseFromBundle(hash: string): Promise<boolean> {
    const location = this.locations.get(hash);
    if (!location) return false;
    const bundle = await readFile(join(this.root, location.path));
    const members: BundleMember[] = [];
    for (const [other, place] of this.locations) {
      if (other === hash || place.path !== location.path) continue;
      members.push({
        hash: other,
        compressed: sliceBundle(bundle, { offset: place.offset ?? 0, length: place.length ?? 0 }),
        size: place.size,
      });
    }
    if (members.length > 0) await this.writeBundle(members);
    this.locations.delete(hash);
    this.archivedAt.delete(hash);
    await this.record({ hash, at: this.now().toISOString(), erased: true });
    await rm(join(this.root, location.path), { force: true });
    return true;
  }
}
