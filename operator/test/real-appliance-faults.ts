// Faults on the real node, destructive, so last: each component's pod deleted while the appliance is in use.
// The gateway keeps answering where it can, the appliance's conditions show the outage and recover, and every
// ingest Cortex acknowledged is still there afterwards (sent again, each comes back a duplicate). The recovery
// times go into the suite's measurements.
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { waitFor } from "../../test/harness/src/wait.js";
import {
  conditions,
  cortexApi,
  gatewayAccess,
  kubectl,
  leaseHolder,
  measured,
  namespace,
  operatorNamespace,
  operatorPods,
} from "./real-appliance.js";
import { person, say } from "./real-appliance-conversation.js";

type Component = "opensearch" | "cortex" | "ollama" | "gateway";
const conditionOf: Record<Component, string> = {
  opensearch: "OpenSearchReady",
  cortex: "CortexReady",
  ollama: "OllamaReady",
  gateway: "GatewayReady",
};

const recoveries: Record<string, { outageSeenMs: number; readyAgainMs: number }> = {};
measured.recoveries = recoveries;

/** One knowledge event; its provenance key makes a second delivery a duplicate, never a second copy. */
const event = (key: string) => ({
  kind: "knowledge",
  provenanceKey: key,
  scope: "user",
  owner: { userId: person.userId },
  privacy: "private",
  statement: `Fault drill note ${key}: the spare fuses are in the hallway cupboard.`,
  type: "fact",
  source: "user",
  confidence: 0.8,
});

/** Ingest one event; true when Cortex acknowledged it (stored or already had it). */
async function ingest(key: string): Promise<boolean> {
  try {
    const answer = (await cortexApi("POST", "/ingest", { events: [event(key)] })) as { created?: number };
    return typeof answer.created === "number";
  } catch {
    return false;
  }
}

async function conditionStatus(type: string): Promise<string | undefined> {
  return (await conditions()).find((condition) => condition.type === type)?.status;
}

/**
 * Delete the component's pod and measure: how long until the appliance shows it (the component's condition not
 * True), and until Ready is True again. `during` runs while it is down.
 */
async function deleteAndRecover(component: Component, during: () => Promise<void>): Promise<void> {
  const type = conditionOf[component];
  const started = Date.now();
  await kubectl([
    "-n",
    namespace,
    "delete",
    "pod",
    "-l",
    `app.kubernetes.io/instance=moltbox,app.kubernetes.io/name=${component}`,
    "--wait=false",
  ]);
  await waitFor(async () => ((await conditionStatus(type)) !== "True" ? true : undefined), {
    what: `${type} to show the ${component} outage`,
    timeoutMs: 60_000,
    intervalMs: 500,
  });
  const outageSeenMs = Date.now() - started;
  // Recovery is timed on its own, while `during` uses the appliance.
  const readyAgain = waitFor(
    async () => ((await conditionStatus("Ready")) === "True" ? Date.now() - started : undefined),
    { what: `Ready again after the ${component} pod was deleted`, timeoutMs: 300_000, intervalMs: 1_000 },
  );
  // Should `during` fail, its error is the one to report, not a later timeout of this wait.
  readyAgain.catch(() => undefined);
  await during();
  const readyAgainMs = await readyAgain;
  recoveries[component] = { outageSeenMs, readyAgainMs };
  console.log(`${component}: outage seen after ${outageSeenMs} ms, Ready again after ${readyAgainMs} ms`);
}

/** Ingest one event a second while `untilDone` is pending; the keys Cortex acknowledged. */
async function ingestWhile(prefix: string, untilDone: Promise<unknown>): Promise<string[]> {
  let done = false;
  void untilDone.finally(() => {
    done = true;
  });
  const acknowledged: string[] = [];
  for (let index = 0; !done; index++) {
    const key = `${prefix}-${index}`;
    if (await ingest(key)) acknowledged.push(key);
    await sleep(1_000);
  }
  return acknowledged;
}

/** Every acknowledged event is stored: delivered again, Cortex reports each as a duplicate. */
async function expectAllStored(keys: readonly string[]): Promise<void> {
  const answer = (await cortexApi("POST", "/ingest", { events: keys.map(event) })) as {
    created: number;
    duplicates: number;
  };
  expect(answer).toMatchObject({ created: 0, duplicates: keys.length });
}

export function describeFaults(): void {
  describe("faults on the real node, each component's pod deleted in use", () => {
    for (const component of ["opensearch", "cortex"] as const) {
      it(`keeps the gateway answering without ${component}, shows the outage, recovers, and loses no acknowledged ingest`, async () => {
        let acknowledged: string[] = [];
        await deleteAndRecover(component, async () => {
          // Degraded, not down: the plugin skips injection when Cortex cannot answer, the model still replies.
          const turn = say("What should I pack for a weekend in Bergen?", "main", `drill-${component}`);
          acknowledged = await ingestWhile(`fault-${component}`, turn);
          expect((await turn).reply.trim()).not.toBe("");
        });
        // The ingests sent during the outage that Cortex acknowledged, and one sent after recovery.
        expect(await ingest(`fault-${component}-after`)).toBe(true);
        await expectAllStored([...acknowledged, `fault-${component}-after`]);
      }, 600_000);
    }

    it("keeps the gateway up while Ollama restarts", async () => {
      await deleteAndRecover("ollama", async () => {
        const { url } = await gatewayAccess();
        expect((await fetch(`${url}/readyz`)).status).toBe(200);
      });
      // Ready again means Ollama lists the models once more; the gateway's test below talks to it.
    }, 600_000);

    it("brings the gateway back on its volume", async () => {
      await deleteAndRecover("gateway", async () => undefined);
      // The new pod answers on the same volume, through the Ollama restarted just before.
      expect((await say("Hello again.", "main", "drill-gateway")).reply.trim()).not.toBe("");
    }, 600_000);

    it("keeps the appliance Ready while the operator's pod is replaced, and the new pod takes the Lease", async () => {
      const old = await operatorPods("{.items[0].metadata.name}");
      const started = Date.now();
      await kubectl(["-n", operatorNamespace, "delete", "pod", old, "--wait=false"]);
      const leader = await waitFor(
        async () => {
          const holder = await leaseHolder();
          return holder !== "" && holder !== old ? holder : undefined;
        },
        { what: "a new operator pod holding the Lease", timeoutMs: 120_000, intervalMs: 1_000 },
      );
      recoveries.operator = { outageSeenMs: 0, readyAgainMs: Date.now() - started };
      console.log(`operator: ${leader} leads after ${Date.now() - started} ms`);
      expect(await conditionStatus("Ready")).toBe("True");
    }, 300_000);
  });
}
