/**
 * Backups in an S3-compatible bucket (a NAS's S3 service, a cloud bucket): `<prefix>/<backup id>/<file>` and
 * `<prefix>/tombstones/<subject>.json`, and `<prefix>/forgotten.json` for forgets. S3 has no rename, so the manifest, written last, is what makes a backup
 * exist: a folder without one is a backup cut short, never listed, and its objects are removed by the next run.
 * Removal deletes the manifest first for the same reason. Files stream up in parts (lib-storage's Upload), so a
 * backup never sits whole in memory.
 */
import { PassThrough, Readable } from "node:stream";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { backupIdPattern } from "@remram/contract";
import { readS3Credentials } from "../config.js";
import {
  type DestinationTombstone,
  forgottenFile,
  forgottenFileName,
  mergeForgotten,
  parseForgottenFile,
} from "../core/backup.js";
import type { ForgottenMark } from "../core/forgotten.js";
import {
  type BackupDestination,
  type BackupWriter,
  checkedSubject,
  newestFirst,
  parseTombstone,
  writeThrough,
} from "./destination.js";
import { type BackupManifest, manifestName, parseManifest } from "./manifest.js";

export interface S3Settings {
  endpoint: string;
  bucket: string;
  /** Folder in the bucket (no leading or trailing slash); empty for the bucket's root. */
  prefix: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Where the key pair came from: read again for every request, so a rotated Secret needs no restart. */
  credentialsDir?: string;
}

export class S3Destination implements BackupDestination {
  private readonly client: S3Client;
  private lastRead: { accessKeyId: string; secretAccessKey: string } | undefined;

  constructor(private readonly settings: S3Settings) {
    this.client = new S3Client({
      endpoint: settings.endpoint,
      region: settings.region,
      // Path-style addressing: what NAS S3 services and self-hosted servers answer; cloud S3 accepts it too.
      forcePathStyle: true,
      // Checksum headers only where S3 requires them: many S3-compatible servers refuse the SDK's newer ones
      // (NotImplemented), and every file's SHA-256 is in the manifest anyway.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      // The SDK waits forever by default: a NAS that stops answering would hold a backup (and every erasure behind
      // it) for good. A connection must open within 10 s and no socket may sit idle for 2 minutes.
      requestHandler: { connectionTimeout: 10_000, socketTimeout: 120_000 },
      credentials: async () => ({
        ...this.credentials(),
        // Already expired: the SDK asks again before every request (two small files read; the kubelet swaps a
        // rotated Secret's files in place within a minute or so).
        expiration: new Date(0),
      }),
    });
  }

  /** The key pair in force: the folder's, or the one read at start while the folder cannot be read. */
  private credentials(): { accessKeyId: string; secretAccessKey: string } {
    const { credentialsDir, accessKeyId, secretAccessKey } = this.settings;
    if (credentialsDir !== undefined) {
      try {
        const read = readS3Credentials(credentialsDir);
        if (read.accessKeyId !== "" && read.secretAccessKey !== "") this.lastRead = read;
      } catch {
        // Mid-swap (the kubelet replaces the files through a symlink): keep the last pair read.
      }
    }
    return this.lastRead ?? { accessKeyId, secretAccessKey };
  }

  get description(): string {
    return `s3 bucket ${this.settings.bucket}${this.settings.prefix ? `/${this.settings.prefix}` : ""} at ${this.settings.endpoint}`;
  }

  /** A request to the bucket; a refusal says which bucket refused what, with S3's reason and status. */
  private async attempt<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if ((error as { name?: string }).name === "NoSuchKey") throw error;
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      const name = (error as { name?: string }).name ?? "Error";
      const message = error instanceof Error ? error.message : String(error);
      const reason = message && message !== name ? `${name}: ${message}` : name;
      throw new Error(`${this.description} refused ${what}: ${reason}${status ? ` (HTTP ${status})` : ""}`, {
        cause: error,
      });
    }
  }

  private key(...parts: string[]): string {
    return [this.settings.prefix, ...parts].filter((part) => part !== "").join("/");
  }

  private async keysUnder(folder: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.attempt("ListObjectsV2", () =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.settings.bucket,
            Prefix: `${folder}/`,
            ContinuationToken: token,
          }),
        ),
      );
      for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return keys;
  }

  /** Backup folders in the bucket, complete or not. */
  private async folders(): Promise<string[]> {
    const ids: string[] = [];
    let token: string | undefined;
    const prefix = this.settings.prefix ? `${this.settings.prefix}/` : "";
    do {
      const page = await this.attempt("ListObjectsV2", () =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.settings.bucket,
            Prefix: prefix,
            Delimiter: "/",
            ContinuationToken: token,
          }),
        ),
      );
      for (const common of page.CommonPrefixes ?? []) {
        const id = common.Prefix?.slice(prefix.length).replace(/\/$/, "");
        if (id !== undefined && backupIdPattern.test(id)) ids.push(id);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return ids.sort().reverse();
  }

  /**
   * One DeleteObject per key: DeleteObjects needs a checksum header that many S3-compatible servers refuse
   * (NotImplemented), and a backup is a dozen files.
   */
  private async deleteKeys(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      await this.attempt("DeleteObject", () =>
        this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: key })),
      );
    }
  }

  private async getText(key: string): Promise<string | undefined> {
    try {
      const answer = await this.attempt("GetObject", () =>
        this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: key })),
      );
      return await answer.Body?.transformToString("utf8");
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === "NoSuchKey") return undefined;
      throw error;
    }
  }

  private putText(key: string, text: string): Promise<unknown> {
    return this.attempt("PutObject", () =>
      this.client.send(
        new PutObjectCommand({
          Bucket: this.settings.bucket,
          Key: key,
          Body: text,
          ContentType: "application/json",
        }),
      ),
    );
  }

  async begin(id: string): Promise<BackupWriter> {
    if (!backupIdPattern.test(id)) throw new Error(`not a backup id: ${id}`);
    // Folders without a manifest are runs that died: never listed, and taking space.
    for (const folder of await this.folders()) {
      if ((await this.getText(this.key(folder, manifestName))) === undefined)
        await this.deleteKeys(await this.keysUnder(this.key(folder)));
    }
    return {
      write: async (name, content, options) => {
        const body = new PassThrough();
        const upload = new Upload({
          client: this.client,
          params: { Bucket: this.settings.bucket, Key: this.key(id, name), Body: body },
        });
        const uploaded = upload.done().catch((error: unknown) => {
          body.destroy(error instanceof Error ? error : new Error(String(error)));
          throw error;
        });
        const [written] = await Promise.all([writeThrough(content, options, body), uploaded]);
        return written;
      },
      commit: async (manifest) => {
        await this.putText(this.key(id, manifestName), `${JSON.stringify(manifest, null, 2)}\n`);
      },
      abort: async () => this.deleteKeys(await this.keysUnder(this.key(id))),
    };
  }

  async manifest(id: string): Promise<BackupManifest | undefined> {
    if (!backupIdPattern.test(id)) return undefined;
    return parseManifest(await this.getText(this.key(id, manifestName)), id);
  }

  async list(): Promise<BackupManifest[]> {
    const manifests: BackupManifest[] = [];
    for (const id of await this.folders()) {
      const manifest = await this.manifest(id);
      if (manifest !== undefined) manifests.push(manifest);
    }
    return newestFirst(manifests);
  }

  read(id: string, name: string): Readable {
    if (!backupIdPattern.test(id)) throw new Error(`not a backup id: ${id}`);
    const key = this.key(id, name);
    const client = this.client;
    const bucket = this.settings.bucket;
    return Readable.from(
      (async function* () {
        const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        if (answer.Body === undefined) throw new Error(`${key} has no body`);
        yield* answer.Body as AsyncIterable<Uint8Array>;
      })(),
    );
  }

  async remove(id: string): Promise<void> {
    if (!backupIdPattern.test(id)) throw new Error(`not a backup id: ${id}`);
    // Out of the listing first, then its files.
    await this.deleteKeys([this.key(id, manifestName)]);
    await this.deleteKeys(await this.keysUnder(this.key(id)));
  }

  async recordTombstone({ subject, erasedAt }: DestinationTombstone): Promise<void> {
    const key = this.key("tombstones", `${checkedSubject(subject)}.json`);
    const existing = parseTombstone(await this.getText(key));
    if (existing !== undefined && Date.parse(existing.erasedAt) >= Date.parse(erasedAt)) return;
    await this.putText(key, `${JSON.stringify({ subject, erasedAt })}\n`);
  }

  async tombstones(): Promise<DestinationTombstone[]> {
    const found: DestinationTombstone[] = [];
    for (const key of (await this.keysUnder(this.key("tombstones"))).sort()) {
      const tombstone = parseTombstone(await this.getText(key));
      if (tombstone !== undefined) found.push(tombstone);
    }
    return found;
  }

  async recordForgotten(marks: readonly ForgottenMark[]): Promise<void> {
    if (marks.length === 0) return;
    const merged = mergeForgotten(await this.forgotten(), marks);
    // A PUT replaces the object whole: a reader sees the old list or the new one.
    if (merged.changed) await this.putText(this.key(forgottenFileName), forgottenFile(merged.marks));
  }

  async forgotten(): Promise<ForgottenMark[]> {
    const text = await this.getText(this.key(forgottenFileName));
    return text === undefined ? [] : parseForgottenFile(text);
  }
}
