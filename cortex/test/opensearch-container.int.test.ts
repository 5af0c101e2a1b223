// Cortex against an OpenSearch of its own, started by testcontainers from the locally built image on the test bed's
// podman service (the stand-in `make images` builds: same version and k-NN plugin as the test bed's OpenSearch).

import type { RetrieveResponse } from "@remram/contract";
import { listContainerIds, localContainer, localImages } from "@remram/test-harness";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { type StartedTestContainer, Wait } from "testcontainers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auth, ingestEvents, retrieveFor, startCortex, testCredentials } from "./helpers.js";

const podman = testbedEndpoints("podman");
const ana = { scope: "user", owner: { userId: "ana", householdId: "home" } } as const;
const anaPrincipal = { userId: "ana", householdId: "home", agentId: "main" };

/** The image sets discovery.type=single-node (no bootstrap checks, so vm.max_map_count 65530 is fine). */
async function startOpenSearchContainer(): Promise<StartedTestContainer> {
  return (await localContainer(podman, localImages.opensearch()))
    .withEnvironment({ OPENSEARCH_JAVA_OPTS: "-Xms512m -Xmx512m -XX:TieredStopAtLevel=1" })
    .withExposedPorts(9200)
    .withWaitStrategy(Wait.forHttp("/_cluster/health?wait_for_status=yellow", 9200))
    .withStartupTimeout(180_000)
    .start();
}

describe("Cortex on OpenSearch in a podman container (testcontainers)", () => {
  let opensearch: StartedTestContainer;
  let app: FastifyInstance;
  // The last test stops both itself; afterAll covers a run that failed before it.
  let stopped = false;

  beforeAll(async () => {
    const started = Date.now();
    opensearch = await startOpenSearchContainer();
    console.log(`OpenSearch container healthy in ${Date.now() - started} ms`);
    app = await startCortex({
      opensearchUrl: `http://${opensearch.getHost()}:${opensearch.getMappedPort(9200)}`,
    });
  });
  afterAll(async () => {
    if (stopped) return;
    await app?.close();
    await opensearch?.stop();
  });

  it("ingests a fact and retrieves it", async () => {
    const ingested = await ingestEvents(app, [
      { kind: "knowledge", ...ana, statement: "The water softener takes salt tablets", type: "fact" },
    ]);
    expect(ingested.created).toBe(1);
    const answer = await retrieveFor(app, {
      principal: anaPrincipal,
      requestText: "what does the water softener take",
      tokenBudget: 300,
    });
    expect(answer.facts.map((fact) => fact.statement)).toContain("The water softener takes salt tablets");
  });

  it("serves the same from the Cortex image, container to container on the podman network", async () => {
    const opensearchIp = opensearch.getIpAddress(podman.network);
    const started = Date.now();
    const cortex = await (await localContainer(podman, localImages.cortex()))
      .withEnvironment({
        CORTEX_OPENSEARCH_URL: `http://${opensearchIp}:9200`,
        CORTEX_GATEWAY_TOKEN: testCredentials.gateway,
        CORTEX_INDEX_PREFIX: "container",
        CORTEX_LOG_LEVEL: "warn",
      })
      .withExposedPorts(8080)
      .withWaitStrategy(Wait.forHttp("/readyz", 8080))
      .start();
    console.log(`Cortex container ready in ${Date.now() - started} ms`);
    try {
      const base = `http://${cortex.getHost()}:${cortex.getMappedPort(8080)}`;
      const post = async (path: string, payload: unknown): Promise<Response> =>
        fetch(`${base}${path}`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify(payload),
        });
      const ingest = await post("/ingest", {
        events: [{ kind: "knowledge", ...ana, statement: "The attic hatch sticks in winter", type: "fact" }],
      });
      expect(ingest.status).toBe(200);
      const retrieve = await post("/retrieve", {
        principal: anaPrincipal,
        requestText: "attic hatch",
        tokenBudget: 300,
      });
      expect(retrieve.status).toBe(200);
      const answer = (await retrieve.json()) as RetrieveResponse;
      expect(answer.facts.map((fact) => fact.statement)).toContain("The attic hatch sticks in winter");
    } finally {
      await cortex.stop();
    }
  });

  it("removes the OpenSearch container when it stops", async () => {
    const url = `http://${opensearch.getHost()}:${opensearch.getMappedPort(9200)}/`;
    stopped = true;
    await app.close();
    await opensearch.stop();
    expect(await listContainerIds(podman.socket)).not.toContain(opensearch.getId());
    await expect(fetch(url)).rejects.toThrow();
  });
});
