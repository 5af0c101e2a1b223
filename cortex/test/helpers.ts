/** Shared set-up of the Cortex integration suites: an app on real services with its own index prefix. */
import { randomBytes } from "node:crypto";
import type { IngestResponse, RetrieveRequestInput, RetrieveResponse } from "@remram/contract";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../src/app.js";
import { type CortexConfigInput, cortexConfig } from "../src/config.js";

export const testToken = "integration-test-token-0123456789";
export const auth = { authorization: `Bearer ${testToken}` };

/** A Cortex app on the given services, indices under a fresh prefix; resolves once its indices exist. */
export async function startCortex(
  overrides: Partial<CortexConfigInput> & { opensearchUrl: string },
): Promise<FastifyInstance> {
  const config = cortexConfig.parse({
    token: testToken,
    indexPrefix: `it-${randomBytes(4).toString("hex")}`,
    logLevel: "silent",
    // Usage counters are written only when a test flushes them, so index state is under the test's control.
    usageFlushIntervalMs: 3_600_000,
    // The shared 2-core test machine is often saturated; degraded answers are tested with explicit limits.
    retrieveTimeoutMs: 10_000,
    ...overrides,
  });
  const app = await buildApp({ config, logger: false });
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
