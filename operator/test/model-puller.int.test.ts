// REMRAM_TESTBED=ollama,registry: the operator's ModelPuller pulls the test bed's models from a registry into a real
// Ollama (the test bed's build over a models directory of its own, so every byte really travels), streams the
// progress, and resumes: after the operator "restarts" (its puller stopped and a new one made) the pull continues
// from the bytes Ollama kept; after Ollama itself restarts (with the pod's repair step between) the failure is
// reported and the next ensure finishes it.
// The registry instance here paces its blob downloads so a pull can be caught part-way.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import type { ManagedProcess } from "../../test/harness/src/process.js";
import { startModelRegistry } from "../../test/harness/src/services/model-registry.js";
import { startPrivateOllama } from "../../test/harness/src/services/ollama.js";
import type { ModelRegistryEndpoints, Started } from "../../test/harness/src/services/types.js";
import { ModelPuller, type ModelReport, modelRegistryHost } from "../src/appliance/model-puller.js";
import { repairInterruptedDownloadsScript } from "../src/appliance/ollama-downloads.js";
import type { PullProgress } from "../src/appliance/pull-progress.js";

const run = promisify(execFile);
const ollama = testbedEndpoints("ollama");
/** 8 MB/s: the 46 MB embedder takes about 6 s, the 98 MB chat model about 12 s. */
const bytesPerSecond = 8_000_000;
const partWay = 12_000_000;

interface Watched {
  /** Every figure the puller published (its onChange calls), in order; undefined for a success. */
  figures: (PullProgress | undefined)[];
  /** Each distinct pull error the reports carried, in order. */
  errors: string[];
  report: ModelReport;
}

/**
 * Call ensure() every 100 ms, as the reconciler would on its requeues, until `done` says so or the model is
 * listed; the figures come from the onChange callback, so none is missed between two calls.
 */
async function watch(
  puller: ModelPuller,
  url: string,
  model: string,
  insecureRegistries: readonly string[],
  done: (figure: PullProgress | undefined) => boolean,
  timeoutMs = 60_000,
): Promise<Watched> {
  const figures: (PullProgress | undefined)[] = [];
  const errors: string[] = [];
  const onChange = (_model: string, figure: PullProgress | undefined) => figures.push(figure);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const report = await puller.ensure(url, [model], { insecureRegistries, onChange });
    const error = report.pullErrors?.get(model);
    if (error !== undefined && errors.at(-1) !== error) errors.push(error);
    const listed = report.listed?.some((entry) => entry.name === model) ?? false;
    if (listed || done(figures.at(-1))) return { figures, errors, report };
    if (Date.now() > deadline) {
      throw new Error(
        `pull of ${model} still running: ${JSON.stringify({ figures: figures.slice(-3), errors })}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The first figure with bytes in it. */
const firstWithBytes = (figures: readonly (PullProgress | undefined)[]) =>
  figures.find((figure) => (figure?.totalBytes ?? 0) > 0);

/**
 * Ollama's records of its partial blobs: `<blob>-partial-<n>` holds `{"N","Offset","Size","Completed"}`. Ollama
 * rewrites a record in place (truncate, write), so a read can meet it empty: read again.
 */
async function partRecords(modelsDir: string): Promise<{ name: string; completed: number; size: number }[]> {
  const blobs = join(modelsDir, "blobs");
  const records = [];
  for (const name of readdirSync(blobs).filter((entry) => /-partial-\d+$/.test(entry))) {
    for (let attempt = 0; ; attempt++) {
      try {
        const record = JSON.parse(readFileSync(join(blobs, name), "utf8")) as {
          Completed: number;
          Size: number;
        };
        records.push({ name, completed: record.Completed, size: record.Size });
        break;
      } catch (error) {
        if (attempt >= 20) throw error;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  }
  return records;
}

const keptBytes = async (modelsDir: string): Promise<number> =>
  (await partRecords(modelsDir)).reduce((sum, part) => sum + part.completed, 0);

async function listed(url: string): Promise<string[]> {
  const body = (await (await fetch(`${url}/api/tags`)).json()) as { models: { name: string }[] };
  return body.models.map((model) => model.name);
}

describe("ModelPuller against a real Ollama and a registry", () => {
  const modelsDir = mkdtempSync(join(tmpdir(), "remram-ollama-pulls-"));
  let registry: Started<ModelRegistryEndpoints>;
  let target: { url: string; server: ManagedProcess };
  let insecureRegistries: string[];

  beforeAll(async () => {
    registry = await startModelRegistry({ ollama, blobBytesPerSecond: bytesPerSecond });
    target = await startPrivateOllama(modelsDir);
    insecureRegistries = [modelRegistryHost(registry.endpoints.embedModel) ?? ""];
  });

  afterAll(async () => {
    await target?.server.stop();
    await registry?.stop();
    rmSync(modelsDir, { recursive: true, force: true });
  });

  it("continues a pull from the bytes Ollama kept when the operator restarts mid-pull", async () => {
    const model = registry.endpoints.embedModel;
    const started = Date.now();
    const first = new ModelPuller({ progressIntervalMs: 250 });
    const before = await watch(
      first,
      target.url,
      model,
      insecureRegistries,
      (figure) => (figure?.completedBytes ?? 0) >= partWay,
    );
    const stoppedAfterMs = Date.now() - started;
    // The operator goes away: its streams close. Ollama cancels a download nobody waits for and records its part.
    first.stop();
    let kept = 0;
    for (let attempt = 0; attempt < 50 && kept === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      kept = await keptBytes(modelsDir);
    }
    const stoppedAt = before.figures.at(-1);
    expect(stoppedAt?.status).toBe("downloading");
    expect(kept).toBeGreaterThanOrEqual(stoppedAt?.completedBytes ?? 0);
    // The download really stopped: the record does not move while no one pulls.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await keptBytes(modelsDir)).toBe(kept);
    expect(await listed(target.url)).not.toContain(model);

    const resumedAt = Date.now();
    const second = new ModelPuller({ progressIntervalMs: 250 });
    const after = await watch(second, target.url, model, insecureRegistries, () => false);
    const resumedMs = Date.now() - resumedAt;
    // The new pull's first figure with bytes already counts the kept ones: Ollama resumed, it did not start over.
    expect(after.figures[0]?.status).toBe("pulling manifest");
    const resumed = firstWithBytes(after.figures);
    expect(resumed?.completedBytes).toBeGreaterThanOrEqual(kept);
    expect(resumed?.completedBytes).toBeLessThan(resumed?.totalBytes ?? 0);
    expect(after.figures.at(-1)).toBeUndefined();
    expect(after.errors).toEqual([]);
    expect(await listed(target.url)).toContain(model);
    expect(await partRecords(modelsDir)).toEqual([]);
    console.info(
      JSON.stringify({
        case: "operator restart",
        model,
        stoppedAfterMs,
        stoppedAt,
        keptBytes: kept,
        resumed,
        resumedMs,
        publications: { before: before.figures.length, after: after.figures.length },
      }),
    );
  });

  // About one SIGTERM in three lands while Ollama 0.24 rewrites a part's record (truncate, then write) and leaves it
  // empty; an Ollama started over that directory fails every pull of the model with "EOF". The pod runs the repair
  // step before `ollama serve` (ollama-downloads.ts); here it runs between the two servers the same way, over a
  // record emptied by hand when the stop did not empty it, so both outcomes of the race are the case every run.
  it("reports a pull that Ollama's restart broke, and finishes it on a later ensure after the pod's repair step", async () => {
    const model = registry.endpoints.chatModel;
    const port = Number(new URL(target.url).port);
    const puller = new ModelPuller({ progressIntervalMs: 250 });
    const before = await watch(
      puller,
      target.url,
      model,
      insecureRegistries,
      (figure) => (figure?.completedBytes ?? 0) >= partWay,
    );
    const stoppedAt = before.figures.at(-1);
    let emptiedByStop: boolean;
    let keptAfterRepair: number;
    try {
      // The pod restarts: SIGTERM, then the repair step and a new server over the same models directory and address.
      await target.server.stop();
      const down = await puller.ensure(target.url, [model], { insecureRegistries });
      expect(down.pullError).toMatch(/^Ollama unreachable/);
      for (let attempt = 0; attempt < 50 && puller.isPulling(target.url, model); attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(puller.isPulling(target.url, model)).toBe(false);
      const blobs = join(modelsDir, "blobs");
      const records = readdirSync(blobs).filter((entry) => /-partial-\d+$/.test(entry));
      expect(records.length).toBeGreaterThan(0);
      emptiedByStop = records.some((record) => statSync(join(blobs, record)).size === 0);
      if (!emptiedByStop) truncateSync(join(blobs, records[0] ?? ""), 0);
      const repair = await run("sh", ["-c", repairInterruptedDownloadsScript], {
        env: { ...process.env, OLLAMA_MODELS: modelsDir },
      });
      expect(repair.stdout).toContain("removing the interrupted download of sha256-");
      expect(readdirSync(blobs).filter((entry) => entry.includes("-partial"))).toEqual([]);
      keptAfterRepair = await keptBytes(modelsDir);
    } finally {
      target = await startPrivateOllama(modelsDir, port);
    }

    const figures: (PullProgress | undefined)[] = [];
    const restarted = await puller.ensure(target.url, [model], {
      insecureRegistries,
      onChange: (_model, figure) => figures.push(figure),
    });
    // The failure is reported (ModelsReady=False/ModelPullFailed in the appliance) beside where it stopped, while
    // the retry starts.
    const failure = restarted.pullErrors?.get(model);
    expect(failure).toMatch(/^pull failed: /);
    expect(restarted.pulls?.get(model)?.completedBytes).toBeGreaterThanOrEqual(
      stoppedAt?.completedBytes ?? 0,
    );
    expect(puller.isPulling(target.url, model)).toBe(true);
    const after = await watch(puller, target.url, model, insecureRegistries, () => false);
    expect(await listed(target.url)).toContain(model);
    // Once the retry got past the manifest the failure was no longer reported, and no EOF was ever met.
    expect(after.report.pullErrors).toBeUndefined();
    expect(after.errors.filter((error) => error.includes("EOF"))).toEqual([]);
    const retried = [...figures, ...after.figures];
    expect(retried[0]?.status).toBe("pulling manifest");
    // The repaired blob downloads afresh.
    const resumed = firstWithBytes(retried);
    expect(resumed?.completedBytes).toBeGreaterThanOrEqual(keptAfterRepair);
    console.info(
      JSON.stringify({
        case: "ollama restart",
        model,
        stoppedAt,
        emptiedByStop,
        keptAfterRepair,
        failure,
        resumed,
      }),
    );
  });

  it("pulls both test models unpaced from the test bed's registry, publishing progress at most once a second", async () => {
    const testbedRegistry = testbedEndpoints("registry");
    // Drop what the cases above pulled: Ollama deletes blobs no manifest uses, so these pulls download every byte.
    for (const name of await listed(target.url)) {
      const response = await fetch(`${target.url}/api/delete`, {
        method: "DELETE",
        body: JSON.stringify({ model: name }),
      });
      expect(response.status).toBe(200);
    }
    expect(readdirSync(join(modelsDir, "blobs"))).toEqual([]);
    const insecure = [modelRegistryHost(testbedRegistry.embedModel) ?? ""];
    const timings: Record<string, { ms: number; publications: number; bytes: number }> = {};
    for (const model of [testbedRegistry.embedModel, testbedRegistry.chatModel]) {
      const puller = new ModelPuller({ progressIntervalMs: 1_000 });
      const started = Date.now();
      const watched = await watch(puller, target.url, model, insecure, () => false);
      const ms = Date.now() - started;
      const publications = watched.figures.length;
      const bytes = watched.figures.filter((figure) => figure !== undefined).at(-1)?.totalBytes ?? 0;
      timings[model] = { ms, publications, bytes };
      // Phases (pulling manifest, downloading, verifying, writing manifest) and the end each publish at once;
      // byte counts at most once per interval: far fewer than Ollama's ~16 lines a second per blob.
      expect(publications).toBeLessThanOrEqual(5 + Math.ceil(ms / 1_000));
      expect(await listed(target.url)).toContain(model);
    }
    console.info(JSON.stringify({ case: "unpaced", timings }));
  });

  it("reports a model the registry lacks with Ollama's reason, and tries again on the next ensure", async () => {
    const model = registry.endpoints.embedModel.replace(/:latest$/, ":absent");
    const puller = new ModelPuller();
    await puller.ensure(target.url, [model], { insecureRegistries });
    for (let attempt = 0; attempt < 100 && puller.isPulling(target.url, model); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const report = await puller.ensure(target.url, [model], { insecureRegistries });
    expect(report.pullErrors?.get(model)).toBe("pull failed: pull model manifest: file does not exist");
    expect(puller.isPulling(target.url, model)).toBe(true);
    puller.stop();
  });
});
