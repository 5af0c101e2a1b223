/**
 * Time per request on pathological input (security issue 15, finding 7): every write route (and retrieve) of a
 * Cortex with its maturation routes, on a real OpenSearch, once per pathological 64 KB pattern
 * (cortex/src/testing/pathological.ts) and once with ordinary prose of the same size. The indices refresh every
 * 100 ms here, so an answer's time is the request's own work rather than the wait for the next 1 s refresh that
 * every acknowledged write includes in production. Writes bench/results/bad-input.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startOpenSearch } from "@remram/test-harness";
import { buildApp } from "../cortex/src/app.js";
import { cortexConfig } from "../cortex/src/config.js";
import { maturationIndices } from "../cortex/src/knowledge/records.js";
import { maturationPlugin } from "../cortex/src/maturation.js";
import { headersFor, testCredentials } from "../cortex/src/testing/callers.js";
import { pathologicalRequests, pathologicalUnits } from "../cortex/src/testing/pathological.js";

const resultsDir = join(dirname(fileURLToPath(import.meta.url)), "results");
const refreshIntervalMs = 100;
const inputs: Record<string, string> = { ordinary: "the boat is in the north shed ", ...pathologicalUnits };

const opensearch = await startOpenSearch();
const scratch = mkdtempSync(join(tmpdir(), "remram-bench-bad-input-"));
try {
  const app = await buildApp({
    config: cortexConfig.parse({
      credentials: testCredentials,
      opensearchUrl: opensearch.endpoints.url,
      indexPrefix: `bench-bad-input-${Date.now()}`,
      logLevel: "warn",
      usageFlushIntervalMs: 3_600_000,
    }),
    plugins: [
      maturationPlugin({
        workspaceDir: join(scratch, "repo"),
        archiveDir: join(scratch, "archive"),
        gitAuthor: { name: "Remram Cortex", email: "cortex@remram.invalid" },
      }),
    ],
  });
  await app.cortex.initialized;
  const send = (url: string, body: unknown) =>
    app.inject({ method: "POST", url, headers: headersFor("POST", url), payload: body as object });
  for (const { url, body } of pathologicalRequests("warm up ", "warm")) await send(url, body);
  const prefix = app.cortex.store.indices.knowledge.replace(/-knowledge$/, "");
  await app.cortex.store.client.transport.request({
    method: "PUT",
    path: `/${prefix}-*/_settings`,
    body: { index: { refresh_interval: `${refreshIntervalMs}ms` } },
  });

  const requests: { route: string; input: string; status: number; ms: number }[] = [];
  for (const [input, unit] of Object.entries(inputs)) {
    for (const { name, url, body } of pathologicalRequests(unit, input)) {
      const started = performance.now();
      const response = await send(url, body);
      requests.push({
        route: name,
        input,
        status: response.statusCode,
        ms: Math.round(performance.now() - started),
      });
    }
  }
  const routes = [...new Set(requests.map((r) => r.route))].map((route) => {
    const own = requests.filter((r) => r.route === route);
    const pathologicalMs = own.filter((r) => r.input !== "ordinary").map((r) => r.ms);
    return {
      route,
      ordinaryMs: own.find((r) => r.input === "ordinary")?.ms ?? null,
      pathologicalMaxMs: Math.max(...pathologicalMs),
      pathologicalMedianMs: [...pathologicalMs].sort((a, b) => a - b)[Math.floor(pathologicalMs.length / 2)],
      statuses: [...new Set(own.map((r) => r.status))].sort(),
      slowest: own.reduce((a, b) => (b.ms > a.ms ? b : a)).input,
    };
  });
  const result = {
    benchmark: "bad-input",
    finishedAt: new Date().toISOString(),
    goal: "every pathological request answered in < 1 s, never with a 5xx",
    refreshIntervalMs,
    inputChars: 64_000,
    routes,
    requests,
  };
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, "bad-input.json"), `${JSON.stringify(result, null, 2)}\n`);
  console.log(JSON.stringify({ ...result, requests: undefined }, null, 2));
  for (const index of Object.values(maturationIndices(app.cortex.store))) {
    await app.cortex.store.client.transport.request(
      { method: "DELETE", path: `/${index}` },
      { ignore: [404] },
    );
  }
  for (const alias of Object.values(app.cortex.store.indices)) {
    await app.cortex.store.client.transport.request(
      { method: "DELETE", path: `/${alias}-v*` },
      { ignore: [404] },
    );
  }
  await app.close();
} finally {
  rmSync(scratch, { recursive: true, force: true });
  await opensearch.stop();
}
