import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import type { BackupSummary, BackupsResponse, RestoreStatus } from "@remram/contract";
import { type S3Endpoints, startS3Server } from "@remram/test-harness";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../../test/harness/src/wait.js";
import {
  bearer,
  type FullCortex,
  ingestEvents,
  knowledgeEvent,
  startFullCortex,
} from "../../test/helpers.js";
import { request } from "../store/client.js";

// REMRAM_TESTBED=opensearch,ollama, and an S3-compatible server (S3Proxy, hack/install-s3proxy.sh) started here:
// backups into a bucket through the AWS SDK with signed requests, as into a NAS's S3 service or a cloud bucket.
const { url: opensearchUrl } = testbedEndpoints("opensearch");
const ollama = testbedEndpoints("ollama");
const bucket = "household-backups";
const prefix = "remram/moltbox";

describe("backups in an S3-compatible bucket", () => {
  let s3: { endpoints: S3Endpoints; stop: () => Promise<void> };
  let client: S3Client;
  const started: FullCortex[] = [];

  const start = async (secretAccessKey?: string, credentialsDir?: string) => {
    const { url, region, accessKeyId, secretAccessKey: secret } = s3.endpoints;
    const cortex = await startFullCortex({
      opensearchUrl,
      ollamaUrl: ollama.url,
      embedModel: ollama.embedModel,
      embedTimeoutMs: 20_000,
      archiveTieringIntervalMinutes: 0,
      backupS3: {
        endpoint: url,
        bucket,
        prefix,
        region,
        accessKeyId,
        secretAccessKey: secretAccessKey ?? secret,
        ...(credentialsDir ? { credentialsDir } : {}),
      },
      backupKeep: 2,
    });
    started.push(cortex);
    return cortex.app;
  };
  const call = (
    app: FastifyInstance,
    method: "GET" | "POST",
    url: string,
    payload?: Record<string, unknown>,
  ) => app.inject({ method, url, headers: bearer("admin"), ...(payload ? { payload } : {}) });
  const settledBackups = (app: FastifyInstance) =>
    waitFor(
      async () => {
        const list = (await call(app, "GET", "/admin/backups")).json<BackupsResponse>();
        return list.running === undefined ? list : undefined;
      },
      { what: "the backup to end", timeoutMs: 120_000 },
    );
  const backup = async (app: FastifyInstance): Promise<BackupSummary> => {
    const response = await call(app, "POST", "/admin/backups");
    expect(response.statusCode, response.body).toBe(202);
    const { id } = response.json<{ id: string }>();
    const list = await settledBackups(app);
    const done = list.backups.find((b) => b.id === id);
    if (done === undefined) throw new Error(`backup ${id} failed: ${list.lastFailure?.error}`);
    return done;
  };
  const keys = async (under: string) =>
    ((await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: under }))).Contents ?? []).map(
      (object) => object.Key ?? "",
    );

  beforeAll(async () => {
    s3 = await startS3Server();
    const { url, region, accessKeyId, secretAccessKey } = s3.endpoints;
    client = new S3Client({
      endpoint: url,
      region,
      forcePathStyle: true,
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      credentials: { accessKeyId, secretAccessKey },
    });
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  }, 120_000);
  afterAll(async () => {
    for (const cortex of started) await cortex.stop();
    client?.destroy();
    await s3?.stop();
  });

  it("backs up into the bucket, lists only complete backups, and restores onto a fresh Cortex", async () => {
    const source = await start();
    const ingested = await ingestEvents(source, [
      knowledgeEvent("ana", "ana-tea", "Ana drinks green tea in the morning"),
      knowledgeEvent("carol", "carol-cello", "Carol plays the cello on Sundays"),
      knowledgeEvent("ana", "ana-bike", "Ana rides her bike to the market"),
    ]);
    // A run that died before its manifest: never listed, and gone after the next backup.
    const dead = `${prefix}/backup-20260101T000000Z-dead00`;
    await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: `${dead}/index-knowledge.ndjson.gz`, Body: "x" }),
    );
    expect((await call(source, "GET", "/admin/backups")).json<BackupsResponse>().backups).toEqual([]);

    const taken = await backup(source);
    expect(taken.counts).toMatchObject({ knowledge: 3, commits: 0 });
    const stored = await keys(`${prefix}/${taken.id}/`);
    expect(stored).toEqual(
      expect.arrayContaining([
        `${prefix}/${taken.id}/manifest.json`,
        `${prefix}/${taken.id}/index-knowledge.ndjson.gz`,
        `${prefix}/${taken.id}/archive.ndjson.gz`,
      ]),
    );
    expect(await keys(`${dead}/`)).toEqual([]);

    // Carol is erased after the backup: her tombstone goes to the bucket, under a digest.
    const erased = await call(source, "POST", "/admin/erasure", {
      userId: "carol",
      requestedBy: "carol",
      reason: "asked to be forgotten",
    });
    expect(erased.statusCode, erased.body).toBe(200);
    const tombstones = await keys(`${prefix}/tombstones/`);
    expect(tombstones).toHaveLength(1);
    expect(tombstones[0]).not.toContain("carol");
    // Ana forgets one thing after the backup: the forget's tombstones go to the bucket too.
    const forgot = await call(source, "POST", "/person/knowledge/forget", {
      userId: "ana",
      requestedBy: "ana",
      ids: [ingested.items[2]?.ids[0]],
      reason: "sold the bike",
    });
    expect(forgot.statusCode, forgot.body).toBe(200);
    expect(await keys(`${prefix}/forgotten.json`)).toEqual([`${prefix}/forgotten.json`]);

    const target = await start();
    const accepted = await call(target, "POST", "/admin/restore", { backupId: taken.id });
    expect(accepted.statusCode, accepted.body).toBe(202);
    const status = await waitFor(
      async () => {
        const current = (await call(target, "GET", "/admin/restore")).json<RestoreStatus>();
        return current.running === undefined ? current : undefined;
      },
      { what: "the restore to end", timeoutMs: 120_000 },
    );
    expect(status.lastFailure).toBeUndefined();
    expect(status.last).toMatchObject({
      backupId: taken.id,
      erasuresReplayed: 1,
      forgetsReplayed: 1,
      counts: { knowledge: 3 },
    });
    const { store } = target.cortex;
    await request(store, "POST", `/${store.indices.knowledge}/_refresh`);
    const { body } = await request<{ hits: { hits: { _source: { owner: { userId: string } } }[] } }>(
      store,
      "POST",
      `/${store.indices.knowledge}/_search`,
      { query: { match_all: {} } },
    );
    expect(body.hits.hits.map((hit) => hit._source.owner.userId)).toEqual(["ana"]);

    // Retention (keep 2): a third backup removes the oldest, manifest first.
    await backup(source);
    const third = await backup(source);
    const listed = (await call(source, "GET", "/admin/backups")).json<BackupsResponse>().backups;
    expect(listed.map((b) => b.id)).toEqual([third.id, expect.any(String)]);
    expect(await keys(`${prefix}/${taken.id}/`)).toEqual([]);
  }, 300_000);

  it("reports a bucket that refuses its credentials as a failed backup, naming S3's reason, and takes a rotated key without a restart", async () => {
    // The mounted Secret's folder as the kubelet writes it; it holds a wrong key first.
    const secretDir = mkdtempSync(join(tmpdir(), "remram-s3-key-"));
    const writeKey = (secretAccessKey: string) => {
      writeFileSync(join(secretDir, "access-key-id"), `${s3.endpoints.accessKeyId}\n`);
      writeFileSync(join(secretDir, "secret-access-key"), `${secretAccessKey}\n`);
    };
    writeKey("not-the-secret");
    const refused = await start("not-the-secret", secretDir);
    const response = await call(refused, "POST", "/admin/backups");
    expect(response.statusCode, response.body).toBe(202);
    const list = await settledBackups(refused);
    // Which bucket refused what, and S3's status; never the credential.
    expect(list.lastFailure?.error).toMatch(
      new RegExp(`^s3 bucket ${bucket}/${prefix} at \\S+ refused ListObjectsV2: .*\\(HTTP 403\\)$`),
    );
    expect(list.lastFailure?.error).not.toContain("not-the-secret");
    expect(list.backups).toEqual([]);
    expect(list.destinationError).toContain("(HTTP 403)");

    // The user rotates the Secret to the bucket's real key: the same Cortex backs up with it (holding data, so
    // it may back up over the earlier test's backups).
    writeKey(s3.endpoints.secretAccessKey);
    await ingestEvents(refused, [knowledgeEvent("ana", "ana-bike", "Ana rides a blue bicycle to work")]);
    const taken = await backup(refused);
    const after = (await call(refused, "GET", "/admin/backups")).json<BackupsResponse>();
    expect(after.backups.map((b) => b.id)).toContain(taken.id);
    expect(after.destinationError).toBeUndefined();
    rmSync(secretDir, { recursive: true, force: true });
  }, 180_000);
});
