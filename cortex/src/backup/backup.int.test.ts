import { createHash, randomBytes } from "node:crypto";
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import type {
  BackupSummary,
  BackupsResponse,
  ConsistencyReport,
  ExplicitSaveResponse,
  RestoreStatus,
  RetrieveResponse,
} from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { simpleGit } from "simple-git";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../../test/harness/src/wait.js";
import {
  bearer,
  type FullCortex,
  ingestEvents,
  knowledgeEvent,
  startFullCortex,
} from "../../test/helpers.js";
import { maturationIndices } from "../knowledge/records.js";
import { request } from "../store/client.js";
import { scanDocuments } from "../store/reads.js";
import { backedUpIndices } from "./indices.js";
import { type ArchiveLine, archiveFileName, manifestName } from "./manifest.js";

// REMRAM_TESTBED=opensearch,ollama. Backups of a real Cortex (OpenSearch, the archive's files, a git repository)
// restored onto fresh ones: the same documents, history, archive and answers; consistent when taken under writes;
// an erasure and a forget made after the backup replayed; refusals that write nothing.
const { url: opensearchUrl } = testbedEndpoints("opensearch");
const ollama = testbedEndpoints("ollama");
const ana = { userId: "ana", householdId: "h1", agentId: "main" };

describe("backups and restore (POST /admin/backups, /admin/restore) on real stores", () => {
  let destination: string;
  const started: FullCortex[] = [];
  let source: FastifyInstance;
  let sourceCortex: FullCortex;

  const start = async (keep = 7) => {
    const cortex = await startFullCortex({
      opensearchUrl,
      ollamaUrl: ollama.url,
      embedModel: ollama.embedModel,
      embedTimeoutMs: 20_000,
      archiveTieringIntervalMinutes: 0,
      backupDir: destination,
      backupKeep: keep,
    });
    started.push(cortex);
    return cortex;
  };
  const call = (
    app: FastifyInstance,
    method: "GET" | "POST",
    url: string,
    payload?: unknown,
    caller = "admin",
  ) =>
    app.inject({
      method,
      url,
      headers: bearer(caller as "admin"),
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
  const backup = async (app: FastifyInstance): Promise<BackupSummary> => {
    const response = await call(app, "POST", "/admin/backups", undefined, "operator");
    expect(response.statusCode, response.body).toBe(202);
    const { id } = response.json<{ id: string }>();
    const done = await waitFor(
      async () => {
        const list = (await call(app, "GET", "/admin/backups")).json<BackupsResponse>();
        if (list.running !== undefined) return undefined;
        if (list.lastFailure?.id === id) throw new Error(`backup failed: ${list.lastFailure.error}`);
        return list.backups.find((b) => b.id === id);
      },
      { what: `backup ${id}`, timeoutMs: 120_000 },
    );
    return done;
  };
  const restore = async (app: FastifyInstance, backupId: string) => {
    const response = await call(app, "POST", "/admin/restore", { backupId });
    expect(response.statusCode, response.body).toBe(202);
    return waitFor(
      async () => {
        const status = (await call(app, "GET", "/admin/restore")).json<RestoreStatus>();
        if (status.running !== undefined) return undefined;
        if (status.lastFailure) throw new Error(`restore failed: ${status.lastFailure.error}`);
        return status.last;
      },
      { what: `restore of ${backupId}`, timeoutMs: 120_000 },
    );
  };
  /** Every document of every backed-up index, as id → digest of its source, by index name. */
  const contents = async (app: FastifyInstance) => {
    const store = app.cortex.store;
    const all: Record<string, Map<string, string>> = {};
    for (const { name, index } of backedUpIndices(store, maturationIndices(store))) {
      const documents = new Map<string, string>();
      await request(store, "POST", `/${index}/_refresh`, undefined, { ignore: [404] });
      const exists = await request(store, "HEAD", `/${index}`, undefined, { ignore: [404] });
      if (exists.statusCode !== 404) {
        for await (const hits of scanDocuments<unknown>(store, index, { match_all: {} })) {
          for (const hit of hits)
            documents.set(hit._id, createHash("sha256").update(JSON.stringify(hit._source)).digest("hex"));
        }
      }
      all[name] = documents;
    }
    return all;
  };
  const retrieve = async (app: FastifyInstance, query: string) => {
    const response = await call(
      app,
      "POST",
      "/retrieve",
      { principal: ana, requestText: query, tokenBudget: 800 },
      "gateway",
    );
    expect(response.statusCode, response.body).toBe(200);
    const answer = response.json<RetrieveResponse>();
    return [...answer.facts.map((fact) => fact.id), ...answer.chunks.map((chunk) => chunk.id)];
  };
  const check = async (app: FastifyInstance) => {
    const response = await call(app, "POST", "/admin/check");
    expect(response.statusCode, response.body).toBe(200);
    return response.json<ConsistencyReport>();
  };

  beforeAll(async () => {
    destination = await mkdtemp(join(tmpdir(), "remram-backups-"));
    sourceCortex = await start(2);
    source = sourceCortex.app;
    const remember = async (statement: string) => {
      const response = await call(
        source,
        "POST",
        "/remember",
        { principal: ana, statement, scope: "user" },
        "gateway",
      );
      expect(response.statusCode, response.body).toBe(200);
      return response.json<ExplicitSaveResponse>();
    };
    const first = (await remember("Ana keeps the spare key behind the fuse box")).proposal;
    if (first.status !== "pending") throw new Error(`no pending proposal: ${JSON.stringify(first)}`);
    const promoted = await call(
      source,
      "POST",
      "/promote",
      { proposalId: first.id, approvedBy: "ana" },
      "operator",
    );
    expect(promoted.statusCode, promoted.body).toBe(200);
    await remember("Ana's bike lock code is in the blue notebook");
    await ingestEvents(source, [
      knowledgeEvent("ana", "ana-tea", "Ana drinks green tea in the morning"),
      knowledgeEvent("bob", "bob-van", "Bob drives a blue van to work"),
      knowledgeEvent("carol", "carol-cello", "Carol plays the cello on Sundays"),
    ]);
    for (const [who, words] of [
      ["ana", "Where is the spare key?"],
      ["carol", "Book my cello lesson for Sunday"],
    ] as const) {
      const at = "2026-05-01T09:00:00.000Z";
      const filed = await call(
        source,
        "POST",
        "/archive/transcripts",
        {
          principal: { ...ana, userId: who },
          sessionId: `session-${who}-${randomBytes(3).toString("hex")}`,
          channel: "telegram",
          endReason: "reset",
          endedAt: at,
          messages: [
            { role: "user", content: words, at },
            { role: "assistant", content: "Done.", at },
          ],
        },
        "gateway",
      );
      expect(filed.statusCode, filed.body).toBe(200);
    }
    await waitFor(async () => ((await check(source)).counts.awaitingVector === 0 ? true : undefined), {
      what: "every object embedded",
      timeoutMs: 60_000,
    });
  }, 300_000);

  afterAll(async () => {
    for (const cortex of started) await cortex.stop();
    if (destination) await rm(destination, { recursive: true, force: true });
  });

  it("backs up every index Cortex keeps, and restores the same documents, history, archive and answers", async () => {
    const store = source.cortex.store;
    // Every index under the prefix is one the backup knows.
    const { body: listed } = await request<{ index: string }[]>(
      store,
      "GET",
      `/_cat/indices/${store.indices.knowledge.replace(/-knowledge$/, "")}-*?format=json`,
    );
    const known = new Set(backedUpIndices(store, maturationIndices(store)).map((i) => i.index));
    for (const { index } of listed) expect(known.has(index.replace(/-v\d+$/, "")), index).toBe(true);

    const taken = await backup(source);
    expect(taken.counts).toMatchObject({ knowledge: 5, vectors: 5, archivedDocuments: 2, commits: 1 });
    expect(taken.embedding).toEqual({ model: ollama.embedModel, dimensions: store.embedDimensions });
    const before = await contents(source);
    const answers = await retrieve(source, "where is the spare key");
    expect(answers.length).toBeGreaterThan(0);

    const target = await start();
    const report = await restore(target.app, taken.id);
    expect(report).toMatchObject({ backupId: taken.id, erasuresReplayed: 0 });
    expect(report?.counts).toMatchObject({ knowledge: 5, vectors: 5, archivedDocuments: 2, commits: 1 });
    const after = await contents(target.app);
    for (const name of Object.keys(before))
      expect([...(after[name] ?? [])].sort(), name).toEqual([...(before[name] ?? [])].sort());
    // The archive: the same documents under the same hashes.
    const hashes = async (root: string) =>
      (await readdir(join(root, "hot"), { recursive: true })).filter((f) => f.endsWith(".json")).sort();
    expect(await hashes(target.archiveDir)).toEqual(await hashes(sourceCortex.archiveDir));
    // The repository: the same commits and the same working tree.
    const log = (dir: string) => simpleGit(dir).raw(["log", "--all", "--format=%H %s"]);
    expect(await log(target.workspace)).toBe(await log(sourceCortex.workspace));
    expect(await simpleGit(target.workspace).raw(["status", "--porcelain"])).toBe("");
    // The same question gets the same answer, in the same order.
    expect(await retrieve(target.app, "where is the spare key")).toEqual(answers);
    expect((await check(target.app)).consistent).toBe(true);
    // A Cortex that holds data takes no restore.
    const refused = await call(target.app, "POST", "/admin/restore", { backupId: taken.id });
    expect(refused.statusCode).toBe(409);
    expect(refused.json<{ message: string }>().message).toMatch(/already holds data/);
  }, 300_000);

  it("takes a consistent backup while writes go on", async () => {
    // Writes run before, during and after the backup: each round's end is recorded to prove the overlap.
    const rounds: number[] = [];
    let stop = false;
    const round = async (n: number) => {
      await ingestEvents(
        source,
        Array.from({ length: 20 }, (_, i) =>
          knowledgeEvent("bob", `busy-${n}-${i}`, `Bob noted item ${n}-${i} for the shed`),
        ),
      );
      rounds.push(Date.now());
    };
    const writes = (async () => {
      let n = 0;
      while (!stop) await round(n++);
      // One more after the backup: it cannot be in it.
      await round(n);
    })();
    await waitFor(async () => (rounds.length > 0 ? true : undefined), {
      what: "the first writes",
      timeoutMs: 60_000,
    });
    const taken = await backup(source);
    stop = true;
    await writes;
    expect(
      rounds.some((at) => at > Date.parse(taken.takenAt) && at < Date.parse(taken.completedAt) + 5_000),
    ).toBe(true);
    const target = await start();
    const report = await restore(target.app, taken.id);
    const checked = await check(target.app);
    expect(checked.findings).toEqual([]);
    expect(checked.counts.knowledge).toBe(report?.counts.knowledge);
    // Some of the writes are in, not all of them: the backup is a moment between them.
    expect(report?.counts.knowledge).toBeGreaterThan(5);
    expect(report?.counts.knowledge).toBeLessThan(5 + rounds.length * 20);
  }, 300_000);

  it("replays an erasure made after the backup, so the erased person's data does not come back", async () => {
    const taken = await backup(source);
    const erased = await call(source, "POST", "/admin/erasure", {
      userId: "carol",
      requestedBy: "carol",
      reason: "asked to be forgotten",
    });
    expect(erased.statusCode, erased.body).toBe(200);
    // The erasure's tombstone is in the destination, under a digest: no one's id in clear.
    const tombstones = await readdir(join(destination, "tombstones"));
    expect(tombstones).toHaveLength(1);
    expect(await readFile(join(destination, "tombstones", tombstones[0] ?? ""), "utf8")).not.toContain(
      "carol",
    );

    const target = await start();
    const report = await restore(target.app, taken.id);
    expect(report?.erasuresReplayed).toBe(1);
    const { store } = target.app.cortex;
    await request(store, "POST", `/${store.indices.knowledge}/_refresh`);
    const { body } = await request<{ count: number }>(store, "POST", `/${store.indices.knowledge}/_count`, {
      query: { term: { "owner.userId": "carol" } },
    });
    expect(body.count).toBe(0);
    const archive = maturationIndices(store).archive;
    const { body: summaries } = await request<{ count: number }>(store, "POST", `/${archive}/_count`, {
      query: { term: { ownerIds: "carol" } },
    });
    expect(summaries.count).toBe(0);
    // Her old captures stay refused on the restored appliance.
    const late = await call(
      target.app,
      "POST",
      "/ingest",
      {
        events: [
          {
            ...knowledgeEvent("carol", "carol-late", "Carol plays the cello on Sundays"),
            observedAt: "2026-01-01T00:00:00.000Z",
          },
        ],
      },
      "gateway",
    );
    expect(late.statusCode, late.body).toBe(410);
    expect((await check(target.app)).consistent).toBe(true);
  }, 300_000);

  it("replays a forget made after the backup, so the forgotten object does not come back", async () => {
    const statement = "Ana hides the birthday presents in the attic";
    const event = knowledgeEvent("ana", "ana-presents", statement);
    const id = (await ingestEvents(source, [event])).items[0]?.ids[0];
    if (id === undefined) throw new Error("nothing stored");
    const taken = await backup(source);
    const forgot = await call(
      source,
      "POST",
      "/person/knowledge/forget",
      { userId: "ana", requestedBy: "ana", ids: [id], reason: "a surprise" },
      "app",
    );
    expect(forgot.statusCode, forgot.body).toBe(200);
    // The destination's copy of the forget: digests of the id and of the statement, never either in clear.
    const copy = await readFile(join(destination, "forgotten.json"), "utf8");
    expect(copy).not.toContain(id);
    expect(copy).not.toContain("attic");
    expect((JSON.parse(copy) as { marks: { kind: string }[] }).marks.map((mark) => mark.kind).sort()).toEqual(
      ["object", "statement"],
    );

    const target = await start();
    const report = await restore(target.app, taken.id);
    expect(report?.forgetsReplayed).toBe(1);
    const { store } = target.app.cortex;
    await request(store, "POST", `/${store.indices.knowledge}/_refresh`);
    const restored = await request(store, "GET", `/${store.indices.knowledge}/_doc/${id}`, undefined, {
      ignore: [404],
    });
    expect(restored.statusCode).toBe(404);
    // Ana's other knowledge came back, and her forgotten capture stays refused on the restored appliance.
    const { body } = await request<{ count: number }>(store, "POST", `/${store.indices.knowledge}/_count`, {
      query: { term: { "owner.userId": "ana" } },
    });
    expect(body.count).toBeGreaterThan(0);
    const late = await call(target.app, "POST", "/ingest", { events: [event] }, "gateway");
    expect(late.statusCode, late.body).toBe(410);
    expect((await check(target.app)).consistent).toBe(true);
  }, 300_000);

  it("keeps a caller's attachment byte for byte beside the data, with its digest, and refuses a bad one", async () => {
    const sealed = randomBytes(2_048);
    const post = (payload: unknown) => call(source, "POST", "/admin/backups", payload, "operator");
    for (const bad of [
      { attachments: [{ name: "../secrets", contentBase64: sealed.toString("base64") }] },
      { attachments: [{ name: "attachment-x", contentBase64: "not base64!" }] },
      { attachments: [{ name: "attachment-x", contentBase64: randomBytes(300_000).toString("base64") }] },
    ]) {
      const refused = await post(bad);
      expect(refused.statusCode, refused.body).toBe(400);
    }
    const response = await post({
      attachments: [{ name: "attachment-secrets.yaml.age", contentBase64: sealed.toString("base64") }],
    });
    expect(response.statusCode, response.body).toBe(202);
    const { id } = response.json<{ id: string }>();
    const listed = await waitFor(
      async () => {
        const list = (await call(source, "GET", "/admin/backups")).json<BackupsResponse>();
        return list.running === undefined ? list.backups.find((b) => b.id === id) : undefined;
      },
      { what: "the backup with an attachment", timeoutMs: 120_000 },
    );
    expect(listed?.attachments).toEqual(["attachment-secrets.yaml.age"]);
    expect(await readFile(join(destination, id, "attachment-secrets.yaml.age"))).toEqual(sealed);
    const manifest = JSON.parse(await readFile(join(destination, id, "manifest.json"), "utf8")) as {
      files: { name: string; sha256: string }[];
    };
    expect(manifest.files.find((file) => file.name === "attachment-secrets.yaml.age")?.sha256).toBe(
      createHash("sha256").update(sealed).digest("hex"),
    );
  }, 180_000);

  it("refuses what it cannot do, writing nothing, and keeps only the newest backups", async () => {
    const fresh = await start();
    // An empty Cortex does not back up over backups that hold data: retention would replace them with empty ones.
    const empty = await call(fresh.app, "POST", "/admin/backups", undefined, "operator");
    expect(empty.statusCode).toBe(409);
    expect(empty.json<{ message: string }>().message).toMatch(/holds no data yet .* restore one/);
    expect(
      (await call(fresh.app, "POST", "/admin/restore", { backupId: "backup-20260101T000000Z-abcdef" }))
        .statusCode,
    ).toBe(404);
    expect((await call(fresh.app, "POST", "/admin/restore", { backupId: "../etc" })).statusCode).toBe(400);
    for (const caller of ["gateway", "app"]) {
      expect((await call(fresh.app, "POST", "/admin/backups", undefined, caller)).statusCode, caller).toBe(
        403,
      );
      expect((await call(fresh.app, "GET", "/admin/restore", undefined, caller)).statusCode, caller).toBe(
        403,
      );
    }
    // A file of a backup that no longer matches its digest: the restore fails before writing anything.
    const list = (await call(source, "GET", "/admin/backups")).json<BackupsResponse>();
    const newest = list.backups[0];
    if (newest === undefined) throw new Error("no backup listed");
    // Retention (keep 2 on the source) left the newest two.
    expect(list.backups.length).toBe(2);
    const damaged = await mkdtemp(join(tmpdir(), "remram-backups-damaged-"));
    try {
      const copy = await startFullCortex({
        opensearchUrl,
        ollamaUrl: ollama.url,
        embedModel: ollama.embedModel,
        backupDir: damaged,
      });
      started.push(copy);
      await cp(join(destination, newest.id), join(damaged, newest.id), { recursive: true });
      const file = join(damaged, newest.id, "index-knowledge.ndjson.gz");
      const bytes = await readFile(file);
      bytes[bytes.length - 12] = (bytes[bytes.length - 12] ?? 0) ^ 0xff;
      await writeFile(file, bytes);
      const response = await call(copy.app, "POST", "/admin/restore", { backupId: newest.id });
      expect(response.statusCode, response.body).toBe(202);
      const status = await waitFor(
        async () => {
          const s = (await call(copy.app, "GET", "/admin/restore")).json<RestoreStatus>();
          return s.running === undefined ? s : undefined;
        },
        { what: "the damaged restore to end", timeoutMs: 60_000 },
      );
      expect(status.lastFailure?.error).toMatch(/index-knowledge\.ndjson\.gz does not match its digest/);
      expect((await check(copy.app)).counts.knowledge).toBe(0);
    } finally {
      await rm(damaged, { recursive: true, force: true });
    }
    // A Cortex without a destination says so.
    const none = await startFullCortex({ opensearchUrl });
    started.push(none);
    const refused = await call(none.app, "POST", "/admin/backups", undefined, "operator");
    expect(refused.statusCode).toBe(409);
    expect(refused.json<{ message: string }>().message).toMatch(/CORTEX_BACKUP_DIR/);
  }, 300_000);

  it("finishes a restore cut short when the same backup is restored again, and takes no other meanwhile", async () => {
    const list = (await call(source, "GET", "/admin/backups")).json<BackupsResponse>();
    const [newest, older] = list.backups;
    if (newest === undefined || older === undefined) throw new Error("two backups expected");
    const cut = await mkdtemp(join(tmpdir(), "remram-backups-cut-"));
    try {
      for (const { id } of [newest, older])
        await cp(join(destination, id), join(cut, id), { recursive: true });
      // The archive file's last document no longer matches its hash, and the manifest vouches for the file as it
      // now is: the restore gets past the digests, writes the indices and the repository, then stops in the archive
      // (as when a NAS goes away halfway).
      const archivePath = join(cut, newest.id, archiveFileName);
      const manifestPath = join(cut, newest.id, manifestName);
      const intact = { archive: await readFile(archivePath), manifest: await readFile(manifestPath, "utf8") };
      const lines = gunzipSync(intact.archive).toString("utf8").trimEnd().split("\n");
      const last = JSON.parse(lines.at(-1) ?? "{}") as ArchiveLine;
      lines[lines.length - 1] = JSON.stringify({ ...last, canonical: `${last.canonical} ` });
      const broken = gzipSync(`${lines.join("\n")}\n`);
      await writeFile(archivePath, broken);
      const manifest = JSON.parse(intact.manifest) as { files: { name: string; sha256: string }[] };
      for (const file of manifest.files)
        if (file.name === archiveFileName) file.sha256 = createHash("sha256").update(broken).digest("hex");
      await writeFile(manifestPath, JSON.stringify(manifest));

      const copy = await startFullCortex({
        opensearchUrl,
        ollamaUrl: ollama.url,
        embedModel: ollama.embedModel,
        archiveTieringIntervalMinutes: 0,
        backupDir: cut,
      });
      started.push(copy);
      const restoreEnds = async () => {
        const response = await call(copy.app, "POST", "/admin/restore", { backupId: newest.id });
        expect(response.statusCode, response.body).toBe(202);
        return waitFor(
          async () => {
            const s = (await call(copy.app, "GET", "/admin/restore")).json<RestoreStatus>();
            return s.running === undefined ? s : undefined;
          },
          { what: "the restore to end", timeoutMs: 120_000 },
        );
      };
      const failed = await restoreEnds();
      expect(failed.lastFailure?.error).toMatch(/archive|hash/i);
      // A restore refreshes the indices only once it ends; this one did not, so refresh before counting.
      await request(copy.app.cortex.store, "POST", `/${copy.app.cortex.store.indices.knowledge}/_refresh`);
      expect((await check(copy.app)).counts.knowledge).toBe(newest.counts.knowledge);

      // Meanwhile: no other backup over the half, and no backup of it.
      const other = await call(copy.app, "POST", "/admin/restore", { backupId: older.id });
      expect(other.statusCode).toBe(409);
      expect(other.json<{ message: string }>().message).toMatch(
        new RegExp(
          `^this Cortex holds part of a restore of ${newest.id} \\(started \\S+\\) that did not finish: restore ${newest.id} again to finish it$`,
        ),
      );
      const refusedBackup = await call(copy.app, "POST", "/admin/backups", undefined, "operator");
      expect(refusedBackup.statusCode).toBe(409);
      expect(refusedBackup.json<{ message: string }>().message).toMatch(
        new RegExp(`part of a restore of ${newest.id} that did not finish`),
      );

      // The file comes back whole (the NAS is back): the same backup, restored again, finishes over the half.
      await writeFile(archivePath, intact.archive);
      await writeFile(manifestPath, intact.manifest);
      const finished = await restoreEnds();
      expect(finished.lastFailure).toBeUndefined();
      expect(finished.last?.counts).toMatchObject(newest.counts);
      const report = await check(copy.app);
      expect(report.consistent).toBe(true);
      expect(report.counts.knowledge).toBe(newest.counts.knowledge);
      expect(await simpleGit(copy.workspace).raw(["status", "--porcelain"])).toBe("");
      // Finished: a backup goes ahead again, and another restore is refused as over any Cortex with data.
      await backup(copy.app);
      const again = await call(copy.app, "POST", "/admin/restore", { backupId: older.id });
      expect(again.json<{ message: string }>().message).toMatch(/already holds data/);
    } finally {
      await rm(cut, { recursive: true, force: true });
    }
  }, 300_000);
});
