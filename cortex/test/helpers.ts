/** Shared set-up of the Cortex integration suites: an app on real services with its own index prefix. */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { IngestResponse, RetrieveRequestInput, RetrieveResponse } from "@remram/contract";
import type { FastifyInstance } from "fastify";
import { type BuildAppOptions, buildApp } from "../src/app.js";
import { type CortexConfigInput, cortexConfig } from "../src/config.js";
import { maturationIndices } from "../src/knowledge/records.js";
import { maturationPlugin } from "../src/maturation.js";

import { bearer, testCredentials } from "../src/testing/callers.js";

export { bearer, headersFor, testCredentials } from "../src/testing/callers.js";
/** The gateway's headers: the caller of ingest and retrieve, which most suites are about. */
export const auth = bearer("gateway");
export const operatorAuth = bearer("operator");
export const adminAuth = bearer("admin");
export const appAuth = bearer("app");

/** A Cortex app on the given services, indices under a fresh prefix; resolves once its indices exist. */
export async function startCortex(
  overrides: Partial<CortexConfigInput> & { opensearchUrl: string },
  plugins: BuildAppOptions["plugins"] = [],
): Promise<FastifyInstance> {
  const config = cortexConfig.parse({
    credentials: testCredentials,
    indexPrefix: `it-${randomBytes(4).toString("hex")}`,
    logLevel: "silent",
    // Usage counters are written only when a test flushes them, so index state is under the test's control.
    usageFlushIntervalMs: 3_600_000,
    // The shared 2-core test machine is often saturated; degraded answers are tested with explicit limits.
    retrieveTimeoutMs: 10_000,
    ...overrides,
  });
  const app = await buildApp({ config, logger: false, plugins });
  await app.cortex.initialized;
  return app;
}

/** Delete every index and template the app created (its prefix is unique to the test). */
export async function dropIndices(app: FastifyInstance): Promise<void> {
  const { client, indices } = app.cortex.store;
  for (const alias of Object.values(indices)) {
    await client.transport.request({ method: "DELETE", path: `/${alias}-v*` }, { ignore: [404] });
    await client.transport.request(
      { method: "DELETE", path: `/_index_template/${alias}` },
      { ignore: [404] },
    );
  }
}

/** A person's private fact as the gateway ingests it. */
export const knowledgeEvent = (userId: string, provenanceKey: string, statement: string) => ({
  kind: "knowledge",
  provenanceKey,
  scope: "user",
  owner: { userId },
  privacy: "private",
  statement,
  type: "fact",
  source: "user",
  confidence: 0.8,
});

export async function ingestEvents(app: FastifyInstance, events: unknown[]): Promise<IngestResponse> {
  const response = await app.inject({ method: "POST", url: "/ingest", headers: auth, payload: { events } });
  if (response.statusCode !== 200)
    throw new Error(`ingest answered ${response.statusCode}: ${response.body}`);
  return response.json<IngestResponse>();
}

export async function retrieveFor(
  app: FastifyInstance,
  request: RetrieveRequestInput,
): Promise<RetrieveResponse> {
  const response = await app.inject({ method: "POST", url: "/retrieve", headers: auth, payload: request });
  if (response.statusCode !== 200)
    throw new Error(`retrieve answered ${response.statusCode}: ${response.body}`);
  return response.json<RetrieveResponse>();
}

/** A loopback port nothing listens on: a service that is down. */
export const deadUrl = "http://127.0.0.1:9";

export interface FullCortex {
  app: FastifyInstance;
  /** The workspace git repository promotions commit to. */
  workspace: string;
  archiveDir: string;
  /** Drops its indices (the maturation ones too) and removes its folders. */
  stop: () => Promise<void>;
}

/** A Cortex with every route (reflect, dream, promote, archive, erasure) on fresh folders and a fresh prefix. */
export async function startFullCortex(
  overrides: Partial<CortexConfigInput> & { opensearchUrl: string },
  /** Folders of the caller's for the workspace and the archive (e.g. small volumes); temporary ones otherwise. */
  folders: { workspace?: string; archiveDir?: string } = {},
): Promise<FullCortex> {
  const workspace = folders.workspace ?? (await mkdtemp(join(tmpdir(), "remram-workspace-")));
  const archiveDir = folders.archiveDir ?? (await mkdtemp(join(tmpdir(), "remram-archive-")));
  const app = await startCortex(overrides, [
    maturationPlugin({
      workspaceDir: workspace,
      archiveDir,
      gitAuthor: { name: "Remram Cortex", email: "cortex@remram.invalid" },
    }),
  ]);
  return {
    app,
    workspace,
    archiveDir,
    stop: async () => {
      const { client } = app.cortex.store;
      for (const alias of Object.values(maturationIndices(app.cortex.store))) {
        await client.transport.request({ method: "DELETE", path: `/${alias}` }, { ignore: [404] });
      }
      await dropIndices(app);
      await app.close();
      if (folders.workspace === undefined) await rm(workspace, { recursive: true, force: true });
      if (folders.archiveDir === undefined) await rm(archiveDir, { recursive: true, force: true });
    },
  };
}
