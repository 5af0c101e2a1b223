// Security issue 15: Cortex's HTTP API fuzzed from its own OpenAPI document by schemathesis (property-based, with
// Hypothesis underneath), once per caller credential, against a real Cortex listening on loopback with every route
// (the maturation plugin included) on the test bed's OpenSearch. Gate: no 5xx answer, no failed request (a crash, a
// hang past the request timeout, a dropped connection) and every answer in its documented schema.
//
// Two passes. The full one runs every operation a caller may call through schemathesis's coverage phase (boundary
// and invalid values of every field, deterministic) and a fuzzing phase, on a lexical-only Cortex: with embeddings,
// the coverage phase's maximum-length texts cost a CPU embedding each and the pass takes minutes. The embedding pass
// then sends valid random requests to the routes that embed request text, on a Cortex with the test bed's Ollama,
// for a bounded time. schemathesis comes from hack/install-schemathesis.sh; reports land in .remram/run/fuzz/.
// Over 400 lines on purpose: the seeding, the per-caller documents, the two passes and the report parsing share one
// Cortex and one set of seeded objects; apart, each would start and seed its own.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type CallerName,
  callerNames,
  ingestLimits,
  type RouteContract,
  type RouteName,
  routes,
} from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { binPath, runDir } from "../../test/harness/src/paths.js";
import { buildApp } from "../src/app.js";
import { cortexConfig } from "../src/config.js";
import { ensureMaturationIndices, maturationIndices } from "../src/knowledge/records.js";
import { maturationPlugin } from "../src/maturation.js";
import { bearer, testCredentials } from "../src/testing/callers.js";
import { dropIndices } from "./helpers.js";

/** Fixed, so runs draw the same cases in the same order (`schemathesis run --seed`); another explores further. */
const seed = Number(process.env.REMRAM_FUZZ_SEED ?? 15);
/** The gate's checks; `all` adds status-code, header and auth conformance (for exploring, not the gate). */
const checks = process.env.REMRAM_FUZZ_CHECKS ?? "not_a_server_error,response_schema_conformance";
/** Test cases per operation in the fuzzing phase of the full pass. */
const maxExamples = Number(process.env.REMRAM_FUZZ_MAX_EXAMPLES ?? 25);
/** Seconds the embedding pass may fuzz, all its runs together (it fuzzes until they are spent). */
const embeddingSeconds = Number(process.env.REMRAM_FUZZ_EMBED_SECONDS ?? 40);
/** Routes whose request text Cortex embeds, and dream, which embeds what they stored; with their fuzzing caller. */
const embeddingRuns: { caller: CallerName; routes: RouteName[] }[] = [
  { caller: "gateway", routes: ["ingest", "reflect", "retrieve"] },
  { caller: "operator", routes: ["dream"] },
];
const reportRoot = join(runDir, "fuzz");

type Operation = Record<string, unknown>;
type OpenApi = { paths: Record<string, Record<string, Operation>> } & Record<string, unknown>;

/** The route table's entry of an OpenAPI operation (path `{id}` ↔ route `:id`). */
function routeOf(path: string, method: string): RouteContract {
  const route = (Object.values(routes) as RouteContract[]).find(
    (candidate) =>
      candidate.method === method.toUpperCase() && candidate.url.replace(/:([A-Za-z]\w*)/g, "{$1}") === path,
  );
  if (route === undefined) throw new Error(`${method.toUpperCase()} ${path} is not in the route table`);
  return route;
}

/** The document cut to the operations `keep` accepts; with their names ("POST /ingest"). */
function cut(
  document: OpenApi,
  keep: (route: RouteContract) => boolean,
): { document: OpenApi; operations: string[] } {
  const paths: OpenApi["paths"] = {};
  const operations: string[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      if (!keep(routeOf(path, method))) continue;
      paths[path] = { ...paths[path], [method]: operation };
      operations.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return { document: { ...document, paths }, operations };
}

/**
 * What `caller` may call: the operations whose route lists it, and the open ones (liveness, readiness) in the first
 * caller's run only. A refused route answers 403 before anything else runs; fuzzing it would test only that.
 */
const permittedTo = (caller: CallerName) => (route: RouteContract) =>
  route.open ? caller === callerNames[0] : (route.callers ?? []).includes(caller);

/** State made before fuzzing, so the operations that act on existing things reach past their 404. */
interface Seeded {
  cycleId: string;
  proposalIds: string[];
  hash: string;
  principal: { userId: string; householdId: string; agentId: string };
}

/**
 * The seeded ids as examples in the fuzzed copy: the examples phase sends them (with the other fields generated)
 * and the coverage phase builds on them, so promotion, denial, dream reports and recall run on real objects.
 */
function withSeededExamples(document: OpenApi, seeded: Seeded): OpenApi {
  const copy = structuredClone(document);
  type Parameter = { name: string; schema: Record<string, unknown> };
  const parameter = (path: string, method: string, name: string, value: string) => {
    const parameters = (copy.paths[path]?.[method]?.parameters ?? []) as Parameter[];
    const found = parameters.find((candidate) => candidate.name === name);
    if (found) found.schema = { ...found.schema, examples: [value] };
  };
  const bodyProperty = (path: string, method: string, name: string, value: string) => {
    const body = copy.paths[path]?.[method]?.requestBody as
      | { content: { "application/json": { schema: { properties?: Record<string, object> } } } }
      | undefined;
    const properties = body?.content["application/json"].schema.properties;
    if (properties?.[name]) properties[name] = { ...properties[name], examples: [value] };
  };
  const [promoted, denied = promoted] = seeded.proposalIds;
  parameter("/dream/{cycleId}", "get", "cycleId", seeded.cycleId);
  if (promoted !== undefined) bodyProperty("/promote", "post", "proposalId", promoted);
  if (denied !== undefined) parameter("/proposals/{id}/deny", "post", "id", denied);
  parameter("/archive/{hash}", "get", "hash", seeded.hash);
  parameter("/archive/{hash}", "get", "userId", seeded.principal.userId);
  parameter("/archive/{hash}", "get", "agentId", seeded.principal.agentId);
  return copy;
}

interface HarEntry {
  request: { method: string; url: string; postData?: { text?: string } };
  response: { status: number; content?: { text?: string } };
}

interface FuzzResult {
  name: string;
  operations: number;
  requests: number;
  /** Every answer ≥ 500, with the request that drew it. */
  serverErrors: { request: string; status: number; body: string }[];
  /** JUnit failures (a check failed) and errors (the request itself failed: crash, timeout, connection). */
  failures: string[];
  errors: string[];
  exitCode: number;
  seconds: number;
  output: string;
}

function junitProblems(xml: string, element: "failure" | "error"): string[] {
  const problems: string[] = [];
  for (const [, name, body] of xml.matchAll(/<testcase[^>]*name="([^"]*)"[^>]*>([\s\S]*?)<\/testcase>/g)) {
    const found = new RegExp(`<${element}\\b[^>]*?(?:message="([^"]*)")?[^>]*>`, "g");
    for (const [, message] of (body ?? "").matchAll(found)) {
      problems.push(`${decodeXml(name ?? "")}: ${decodeXml(message ?? element)}`);
    }
  }
  return problems;
}

function decodeXml(text: string): string {
  return text
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&apos;", "'")
    .replaceAll("&#10;", "\n")
    .replaceAll("&amp;", "&");
}

/** Run the schemathesis CLI (asynchronously: the Cortex it fuzzes serves from this process). */
async function schemathesis(args: string[], cwd: string): Promise<{ exitCode: number; output: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      binPath("schemathesis"),
      args,
      {
        cwd,
        maxBuffer: 64 * 1024 * 1024,
        timeout: 600_000,
        // Loopback only: no proxy in between, no colours in the captured output.
        env: {
          ...process.env,
          NO_PROXY: "127.0.0.1,localhost",
          no_proxy: "127.0.0.1,localhost",
          NO_COLOR: "1",
        },
      },
      (error, stdout, stderr) => {
        const output = `${stdout}${stderr}`;
        if (error && typeof error.code !== "number") {
          const hint = "is schemathesis installed? (bash hack/install-schemathesis.sh)";
          reject(new Error(`schemathesis did not run: ${error.message}; ${hint}\n${output}`));
          return;
        }
        resolve({ exitCode: typeof error?.code === "number" ? error.code : 0, output });
      },
    );
  });
}

/** A Cortex with every route, listening on loopback, on indices of its own and a workspace and archive of its own. */
class FuzzTarget {
  app!: FastifyInstance;
  baseUrl = "";
  document!: OpenApi;
  readonly prefix = `it-fuzz-${randomBytes(4).toString("hex")}`;
  private dirs: string[] = [];

  async start(ollama: { url: string; embedModel: string } | undefined, errorLog: string): Promise<void> {
    const workspace = await mkdtemp(join(tmpdir(), "remram-fuzz-workspace-"));
    const archiveDir = await mkdtemp(join(tmpdir(), "remram-fuzz-archive-"));
    this.dirs.push(workspace, archiveDir);
    const config = cortexConfig.parse({
      credentials: testCredentials,
      opensearchUrl: testbedEndpoints("opensearch").url,
      ...(ollama && { ollamaUrl: ollama.url, embedModel: ollama.embedModel }),
      // Its own indices: whatever the fuzzer writes or erases stays under this prefix.
      indexPrefix: this.prefix,
      usageFlushIntervalMs: 3_600_000,
    });
    this.app = await buildApp({
      config,
      // Errors only, to a file: the stack of every 5xx, for the report (the fuzzer sees just the answer).
      logger: { level: "error", file: errorLog },
      plugins: [
        maturationPlugin({
          workspaceDir: workspace,
          archiveDir,
          gitAuthor: { name: "Remram Cortex", email: "cortex@remram.invalid" },
        }),
      ],
    });
    await this.app.cortex.initialized;
    // Writes answer once searchable (refresh=wait_for): at the indices' 1 s refresh most of the run would be spent
    // waiting for refreshes. A 100 ms refresh on this Cortex's own indices changes only how long that wait is.
    await ensureMaturationIndices(this.app.cortex.store);
    await this.app.cortex.store.client.indices.putSettings({
      index: `${this.prefix}-*`,
      body: { index: { refresh_interval: "100ms" } },
    });
    await this.app.listen({ host: "127.0.0.1", port: 0 });
    this.baseUrl = `http://127.0.0.1:${(this.app.server.address() as AddressInfo).port}`;
    // The document Cortex serves: the contract's route table as this checkout has it.
    const served = (await (await fetch(`${this.baseUrl}/docs/json`)).json()) as OpenApi;
    this.document = served;
  }

  /**
   * Objects for the operations that need existing ones: knowledge the person asked to keep (it qualifies for an
   * artifact at once), a dream cycle over it (its report and pending proposals) and an archived transcript.
   */
  async seed(): Promise<Seeded> {
    const principal = { userId: "alice", householdId: "h1", agentId: "main" };
    const call = async (caller: CallerName, method: "GET" | "POST", url: string, payload?: object) => {
      const response = await this.app.inject({ method, url, headers: bearer(caller), payload });
      if (response.statusCode !== 200) throw new Error(`seeding: ${method} ${url} answered ${response.body}`);
      return response.json<Record<string, unknown>>();
    };
    const kept = (type: string, statement: string, scope: object, turn: string) => ({
      type,
      statement,
      scope,
      sourceTurnIds: [turn],
      userDirective: true,
    });
    const household = { kind: "household", ownerIds: [principal.householdId] };
    await call("gateway", "POST", "/reflect", {
      principal,
      sessionId: "fuzz-seed",
      items: [
        kept("preference", "Alice takes tea in the morning", { kind: "user", ownerIds: ["alice"] }, "t1"),
        kept("constraint", "The garden hose stays in the shed over winter", household, "t2"),
        kept("fact", "The router lives in the hallway cupboard", household, "t3"),
      ],
    });
    const { cycleId } = (await call("operator", "POST", "/dream", {})) as { cycleId: string };
    const { proposals } = (await call("operator", "GET", "/proposals?status=pending")) as {
      proposals: { id: string }[];
    };
    const { hash } = (await call("gateway", "POST", "/archive", {
      document: {
        createdAt: new Date().toISOString(),
        source: { sessionId: "fuzz-seed", channel: "telegram" },
        messages: [{ role: "user", content: "Let's plan the vegetable beds for spring", turnId: "t1" }],
        consentScope: { ownerIds: ["alice"], privacy: "private", allowRecall: true },
      },
      summary: "Planning the spring vegetable beds",
    })) as { hash: string };
    if (proposals.length < 2)
      throw new Error(`seeding: the dream cycle proposed ${proposals.length} artifacts`);
    return { cycleId, proposalIds: proposals.map((proposal) => proposal.id), hash, principal };
  }

  async stop(): Promise<void> {
    if (this.app) {
      await dropIndices(this.app);
      const { client } = this.app.cortex.store;
      for (const index of Object.values(maturationIndices(this.app.cortex.store))) {
        await client.transport.request({ method: "DELETE", path: `/${index}` }, { ignore: [404] });
      }
      // Whatever else Cortex created under its prefix, by name (no wildcard deletes on a shared node).
      const { body } = await client.cat.indices({ index: `${this.prefix}-*`, format: "json", h: ["index"] });
      for (const { index } of body as { index: string }[]) {
        await client.transport.request({ method: "DELETE", path: `/${index}` }, { ignore: [404] });
      }
      await this.app.close();
    }
    for (const dir of this.dirs) await rm(dir, { recursive: true, force: true });
  }

  /** Fuzz the operations `keep` accepts with `caller`'s credential; the requests sent and what came back. */
  async fuzz(
    name: string,
    caller: CallerName,
    keep: (route: RouteContract) => boolean,
    options: { phases: string; mode: "all" | "positive"; maxExamples: number; maxSeconds?: number },
  ): Promise<FuzzResult> {
    const { document, operations } = cut(this.document, keep);
    if (operations.length === 0) throw new Error(`${name}: no operation to fuzz`);
    const reportDir = join(reportRoot, name);
    await mkdir(reportDir, { recursive: true });
    const schemaFile = join(reportDir, "openapi.json");
    await writeFile(schemaFile, JSON.stringify(document, null, 2));
    const started = Date.now();
    const { exitCode, output } = await schemathesis(
      [
        "run",
        schemaFile,
        `--url=${this.baseUrl}`,
        `--header=Authorization: Bearer ${testCredentials[caller]}`,
        `--checks=${checks}`,
        `--phases=${options.phases}`,
        `--mode=${options.mode}`,
        `--max-examples=${options.maxExamples}`,
        ...(options.maxSeconds === undefined ? [] : [`--max-time=${options.maxSeconds}`]),
        `--seed=${seed}`,
        // One worker: with more, Hypothesis's threads meet CPython 3.11's "AST constructor recursion depth
        // mismatch" (ast.parse is not thread-safe there) and the run reports it as an error.
        "--workers=1",
        "--request-timeout=60",
        // No example database: nothing is kept between runs, and nothing is written into the checkout.
        "--generation-database=none",
        "--report=junit,har",
        `--report-junit-path=${join(reportDir, "junit.xml")}`,
        `--report-har-path=${join(reportDir, "har.json")}`,
        "--output-sanitize=false",
        "--no-color",
      ],
      reportDir,
    );
    await writeFile(join(reportDir, "output.txt"), output);
    const har = await readFile(join(reportDir, "har.json"), "utf8").catch(() => '{"log":{"entries":[]}}');
    const entries = (JSON.parse(har) as { log: { entries: HarEntry[] } }).log.entries;
    const junit = await readFile(join(reportDir, "junit.xml"), "utf8").catch(() => "");
    return {
      name,
      operations: operations.length,
      requests: entries.length,
      serverErrors: entries
        .filter((entry) => entry.response.status >= 500)
        .map((entry) => ({
          request:
            `${entry.request.method} ${entry.request.url} ${entry.request.postData?.text ?? ""}`.trim(),
          status: entry.response.status,
          body: entry.response.content?.text ?? "",
        })),
      failures: junitProblems(junit, "failure"),
      errors: junitProblems(junit, "error"),
      exitCode,
      seconds: Math.round((Date.now() - started) / 1000),
      output,
    };
  }
}

/** The gate, with what the reader needs when it fails: the requests that drew a 5xx, and schemathesis's output. */
async function expectClean(result: FuzzResult, target: FuzzTarget): Promise<void> {
  expect(result.requests, `schemathesis sent nothing:\n${result.output}`).toBeGreaterThan(0);
  expect(result.serverErrors, `5xx answers (stacks: ${reportRoot}/cortex-errors.log)`).toEqual([]);
  expect(result.errors, `requests that failed:\n${result.output}`).toEqual([]);
  expect(result.failures, `failed checks:\n${result.output}`).toEqual([]);
  expect(result.exitCode, result.output).toBe(0);
  // The process still serves afterwards.
  expect((await fetch(`${target.baseUrl}/healthz`)).status).toBe(200);
}

const results: FuzzResult[] = [];
let foreignIndices: string;

/** Every index of the test bed that is not a fuzzed Cortex's, with its document count. */
async function otherIndices(target: FuzzTarget, prefixes: string[]): Promise<string> {
  const { body } = await target.app.cortex.store.client.cat.indices({
    format: "json",
    h: ["index", "docs.count"],
  });
  return (body as { index: string; "docs.count": string }[])
    .filter(({ index }) => !prefixes.some((prefix) => index.startsWith(`${prefix}-`)))
    .map(({ index, "docs.count": count }) => `${index}=${count}`)
    .sort()
    .join(" ");
}

beforeAll(async () => {
  await rm(reportRoot, { recursive: true, force: true });
  await mkdir(reportRoot, { recursive: true });
});

afterAll(() => {
  if (results.length === 0) return;
  const lines = results.map(
    (r) =>
      `  ${r.name.padEnd(18)} ${String(r.operations).padStart(2)} operations ${String(r.requests).padStart(5)} requests ` +
      `${r.serverErrors.length} 5xx, ${r.failures.length} failed checks, ${r.errors.length} errors, ${r.seconds} s`,
  );
  const total = results.reduce((sum, r) => sum + r.requests, 0);
  const fivexx = results.reduce((sum, r) => sum + r.serverErrors.length, 0);
  console.log(
    `schemathesis, seed ${seed}: ${total} requests, ${fivexx} answered 5xx\n${lines.join("\n")}\nreports: ${reportRoot}`,
  );
});

describe("Cortex's HTTP API fuzzed from its OpenAPI document, every operation per caller (lexical Cortex)", () => {
  const target = new FuzzTarget();

  beforeAll(async () => {
    await target.start(undefined, join(reportRoot, "cortex-errors.log"));
    target.document = withSeededExamples(target.document, await target.seed());
    foreignIndices = await otherIndices(target, [target.prefix]);
  });
  afterAll(async () => {
    // The test bed outside this Cortex's indices is as it was (the embedding pass checks again for its own).
    if (target.app) expect(await otherIndices(target, [target.prefix])).toBe(foreignIndices);
    await target.stop();
  });

  it.each(callerNames)(
    "answers every fuzzed request of the %s caller without a 5xx, a failed request or an off-schema answer",
    async (caller) => {
      const result = await target.fuzz(caller, caller, permittedTo(caller), {
        phases: "examples,coverage,fuzzing",
        mode: "all",
        maxExamples,
      });
      results.push(result);
      await expectClean(result, target);
    },
    600_000,
  );

  // schemathesis keeps generated bodies small, so the contract's upper bounds get a request of their own.
  it("stores the largest ingest the contract allows without a 5xx", async () => {
    // 80 documents of the longest text, just under the 16 MiB body limit: about 54 MiB of chunk documents, which
    // in one bulk request exceeded OpenSearch's indexing pressure limit (429 → 503 on every retry).
    const text = "word ".repeat(ingestLimits.maxDocumentChars / 5);
    const events = Array.from({ length: 80 }, (_, n) => ({
      kind: "document",
      sourceKind: "transcript",
      sourceId: `largest-${n}`,
      scope: "user",
      owner: { userId: "largest", householdId: "h1" },
      text,
    }));
    const response = await target.app.inject({
      method: "POST",
      url: "/ingest",
      headers: bearer("gateway"),
      payload: { events },
    });
    expect(response.statusCode, response.body.slice(0, 500)).toBe(200);
    expect(response.json<{ created: number }>().created).toBe(80);
  }, 180_000);
});

// Without the test bed's Ollama (REMRAM_TESTBED=opensearch) the full pass has covered these routes lexically.
const ollama = inject("testbed").ollama;
describe.skipIf(ollama === undefined)(
  "Cortex's HTTP API fuzzed on the routes that embed (Cortex with Ollama, bounded time)",
  () => {
    const target = new FuzzTarget();
    const embeddedRoutes = embeddingRuns.reduce((sum, run) => sum + run.routes.length, 0);

    beforeAll(async () => {
      await target.start(ollama, join(reportRoot, "cortex-errors.log"));
    });
    afterAll(async () => {
      if (target.app) expect(await otherIndices(target, [target.prefix])).toBe(foreignIndices);
      await target.stop();
    });

    it.each(embeddingRuns)(
      "answers valid random requests of the $caller caller to $routes with embeddings without a 5xx",
      async ({ caller, routes: names }) => {
        const embedded = new Set(names.map((name) => routes[name] as RouteContract));
        const result = await target.fuzz(`embedding-${caller}`, caller, (route) => embedded.has(route), {
          phases: "fuzzing",
          mode: "positive",
          maxExamples: 10,
          maxSeconds: Math.max(5, Math.round((embeddingSeconds * names.length) / embeddedRoutes)),
        });
        results.push(result);
        await expectClean(result, target);
      },
      600_000,
    );
  },
);
