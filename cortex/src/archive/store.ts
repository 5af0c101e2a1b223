import { randomBytes } from "node:crypto";
import { appendFile, link, mkdir, open, readFile, rm, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { gunzip, gzip, zstdCompress, zstdDecompress } from "node:zlib";
import { type MemoryDocument, memoryDocumentSchema } from "@remram/contract";
import { canonicalise, sha256Hex } from "./document.js";

/**
 * The hash-addressed archive on disk (seed 004's storage lifecycle): hot per-hash JSON files, a warm tier of
 * per-hash compressed files, and an append-only manifest mapping hash → location. Files are written once,
 * under a name derived from their content, with link(2) so a second writer can never replace the first;
 * every read re-hashes what it read, so a file that no longer matches its hash is reported, never served.
 */

export type WarmCodec = "zstd" | "gzip";
export type Tier = "hot" | "warm";

export interface ArchiveLocation {
  tier: Tier;
  /** Relative to the archive root. */
  path: string;
  codec?: WarmCodec | undefined;
  /** Size of the canonical (uncompressed) bytes. */
  size: number;
}

type ManifestEntry =
  | ({ hash: string; at: string } & ArchiveLocation)
  | { hash: string; at: string; erased: true };

export class ArchiveIntegrityError extends Error {
  override readonly name = "ArchiveIntegrityError";
  constructor(
    readonly hash: string,
    readonly location: string,
    readonly actualHash: string,
  ) {
    super(`archive file ${location} should hash to ${hash} but hashes to ${actualHash}`);
  }
}

export class ArchiveNotFoundError extends Error {
  override readonly name = "ArchiveNotFoundError";
  constructor(readonly hash: string) {
    super(`no archived document ${hash}`);
  }
}

export interface VerifyResult {
  hash: string;
  ok: boolean;
  location: string;
  problem?: string;
}

const hashPattern = /^[a-f0-9]{64}$/;
const compress = { zstd: promisify(zstdCompress), gzip: promisify(gzip) };
const decompress = { zstd: promisify(zstdDecompress), gzip: promisify(gunzip) };
const extension: Record<WarmCodec, string> = { zstd: ".json.zst", gzip: ".json.gz" };

function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}

export class ArchiveStore {
  private readonly locations = new Map<string, ArchiveLocation>();
  /** One write per hash at a time inside this process; link(2) settles races with other processes. */
  private readonly inFlight = new Map<string, Promise<unknown>>();

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
    for (const line of manifest.split("\n")) {
      if (line.trim() === "") continue;
      let entry: ManifestEntry;
      try {
        entry = JSON.parse(line) as ManifestEntry;
      } catch {
        continue; // a line cut short by a crash; the file it named is found again on the next put
      }
      if ("erased" in entry) store.locations.delete(entry.hash);
      else
        store.locations.set(entry.hash, {
          tier: entry.tier,
          path: entry.path,
          codec: entry.codec,
          size: entry.size,
        });
    }
    return store;
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

  get size(): number {
    return this.locations.size;
  }

  private async record(entry: ManifestEntry): Promise<void> {
    await appendFile(this.manifestPath, `${JSON.stringify(entry)}\n`, "utf8");
  }

  private exclusive<T>(hash: string, work: () => Promise<T>): Promise<T> {
    const previous = this.inFlight.get(hash) ?? Promise.resolve();
    const next = previous.then(work, work);
    this.inFlight.set(hash, next);
    return next.finally(() => {
      if (this.inFlight.get(hash) === next) this.inFlight.delete(hash);
    });
  }

  /** Write bytes durably under `relative`, never replacing an existing file; false when one was there already. */
  private async writeOnce(relative: string, bytes: Uint8Array): Promise<boolean> {
    const target = join(this.root, relative);
    await mkdir(dirname(target), { recursive: true });
    const temporary = `${target}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    const handle = await open(temporary, "wx");
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(temporary, target);
      return true;
    } catch (error) {
      if (isErrno(error, "EEXIST")) return false;
      throw error;
    } finally {
      await unlink(temporary);
    }
  }

  private async readCanonical(hash: string, location: ArchiveLocation): Promise<Buffer> {
    const raw = await readFile(join(this.root, location.path));
    const bytes = location.tier === "warm" && location.codec ? await decompress[location.codec](raw) : raw;
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
      this.locations.set(hash, location);
      await this.record({ hash, at: this.now().toISOString(), ...location });
      return { hash, stored: written, size: bytes.length };
    });
  }

  /** The canonical bytes stored under a hash, verified against it. */
  async getBytes(hash: string): Promise<Buffer> {
    const location = hashPattern.test(hash) ? this.locations.get(hash) : undefined;
    if (!location) throw new ArchiveNotFoundError(hash);
    return this.readCanonical(hash, location);
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
      if (current.tier === "warm") return current;
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
      await rm(join(this.root, this.hotPath(hash)), { force: true });
      for (const codec of ["zstd", "gzip"] as const) {
        await rm(join(this.root, this.warmPath(hash, codec)), { force: true });
      }
      this.locations.delete(hash);
      await this.record({ hash, at: this.now().toISOString(), erased: true });
      return true;
    });
  }
}
