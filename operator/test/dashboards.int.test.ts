// REMRAM_TESTBED=kubernetes,opensearch,ollama: the chart's dashboards against a real Prometheus (built from its Go
// module, hack/install-prometheus.sh) scraping the real operator (in this process, under the chart's RBAC), the real
// Cortex and the hooks plugin in the real OpenClaw gateway, labelled as the chart's PodMonitors and ServiceMonitor
// label them. A household's scenario runs: a chat turn through the gateway (retrieval, capture, reflection), a dream
// cycle asked for through its DreamSchedule, an explicit save approved by a person and promoted. Then every panel's
// query runs on Prometheus: none may be refused, and every panel the scenario exercises must show data. The
// knowledge dashboard is drawn from those results to .remram/run/dashboards/knowledge.png (docs/dashboards/ holds
// one such picture).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiagnosticsMetrics } from "../../app/src/diagnostics/metrics.js";
import { ScrapedMetrics } from "../../app/src/diagnostics/scraped.js";
import {
  type PluginGateway,
  readMetrics,
  reflectionProviderId,
  startPluginGateway,
  writeCortexTokenFile,
} from "../../hooks/src/testing/gateway-fixture.js";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { repoRoot, runDir } from "../../test/harness/src/paths.js";
import { openClawProviderId, sendMessage } from "../../test/harness/src/services/openclaw.js";
import {
  type PrometheusEndpoints,
  queryPrometheus,
  startPrometheus,
} from "../../test/harness/src/services/prometheus.js";
import type { Started } from "../../test/harness/src/services/types.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { decisionPatch, type ProposalView } from "../src/api/approval.js";
import { defaultOperatorNamespace } from "../src/api/generated-files.js";
import {
  type DashboardJson,
  type PanelResults,
  renderDashboardPng,
} from "../src/chart/testing/dashboard-picture.js";
import type { KubeObject } from "../src/runtime/kube-client.js";
import { adminClient, createNamespace, grantApprover, installCrds, runSuffix } from "./cluster.js";
import { cortexCredentials, type OperatorAndCortex, startOperatorAndCortex } from "./operator-cortex.js";

const ollama = testbedEndpoints("ollama");
const { client, kubeConfig } = adminClient();
const suffix = runSuffix();
const namespace = `dashboards-${suffix}`;
const api = `/apis/remram.io/v1alpha1/namespaces/${namespace}`;
const dashboardsDir = join(repoRoot, "charts/remram-operator/dashboards");
// A SmolLM2 turn and its reflection through the gateway take minutes on a busy 2-core box.
const scenarioTimeoutMs = 900_000;

/**
 * Panels the scenario does not exercise, and why; every other panel must show data. (A conflict retried under load
 * may fill the two error panels: that is reported, not failed.)
 */
const notExercised: Record<string, string> = {
  "Reconcile error ratio": "no reconcile fails (the error counter has no series until one does)",
  "Work queue retries per second": "no reconcile is retried",
  "Dream progress while a cycle runs":
    "the gauge exists only while a cycle runs, and this one is over within a scrape",
};

type Proposal = ProposalView & { status?: ProposalView["status"] & { phase?: string } };

let testbed: OperatorAndCortex;
let fixture: PluginGateway;
let operatorMetrics: Server;
let prometheus: Started<PrometheusEndpoints>;
let scenarioStart = 0;
/** remram-app's own scrapes of the same components (its diagnostics page without Prometheus). */
let appScrapes: ScrapedMetrics;

const address = (url: string): string => new URL(url).host;

beforeAll(async () => {
  await installCrds(client);
  await createNamespace(client, namespace);
  testbed = await startOperatorAndCortex(client, kubeConfig, namespace, suffix, { ollama });
  // The operator's /metrics as its probe server serves it in the pod (the test's operator runs none).
  operatorMetrics = createServer((_request, response) => {
    void testbed.operator.metrics.registry.metrics().then((text) => {
      response.writeHead(200, { "content-type": testbed.operator.metrics.registry.contentType });
      response.end(text);
    });
  });
  await new Promise<void>((resolve) => operatorMetrics.listen(0, "127.0.0.1", resolve));
  const tokenFile = writeCortexTokenFile(`dashboards-${suffix}`, cortexCredentials.gateway);
  fixture = await startPluginGateway({
    ollama,
    withTools: false,
    config: ({ metricsPort, queueDir }) => ({
      cortex: { url: testbed.cortexUrl, tokenFile, retrieveTimeoutMs: 4_000 },
      principals: { householdId: "home", identities: { "openai-user:alice": "alice" } },
      escalation: { localProviders: [openClawProviderId, reflectionProviderId] },
      queue: { path: queueDir, drainIntervalMs: 250, backoffInitialMs: 250, backoffMaxMs: 2_000 },
      reflection: {
        runTimeoutMs: 300_000,
        model: { provider: reflectionProviderId, model: ollama.chatModel },
      },
      metrics: { port: metricsPort },
    }),
  });
  const operatorPort = (operatorMetrics.address() as AddressInfo).port;
  prometheus = await startPrometheus([
    {
      job: "remram-operator",
      address: `127.0.0.1:${operatorPort}`,
      labels: { namespace: defaultOperatorNamespace, pod: "remram-operator-0" },
      // The chart's Lease is remram-operator; the test's is suffixed so suites never share one.
      rewrite: [{ label: "name", from: testbed.leaseName, to: "remram-operator" }],
    },
    { job: "cortex", address: address(testbed.cortexUrl), labels: { namespace, pod: "box-cortex-0" } },
    { job: "gateway", address: address(fixture.metricsUrl), labels: { namespace, pod: "box-gateway-0" } },
  ]);
  appScrapes = new ScrapedMetrics({
    endpoints: { cortex: `${testbed.cortexUrl}/metrics`, gateway: fixture.metricsUrl },
    intervalMs: 1_000,
    keepMs: 86_400_000,
  });
  appScrapes.start();
  scenarioStart = Date.now();
}, scenarioTimeoutMs);

afterAll(async () => {
  await appScrapes?.stop();
  await prometheus?.stop();
  await fixture?.stop();
  await new Promise((resolve) => operatorMetrics?.close(resolve));
  await testbed?.stop();
  await client.delete(`/api/v1/namespaces/${namespace}`);
  rmSync(join(runDir, `dashboards-${suffix}`), { recursive: true, force: true });
}, 120_000);

/** Reflections that ran (any outcome but the gate's skips), from the plugin's counters. */
function reflectionRuns(metrics: string): number {
  return [...metrics.matchAll(/^remram_hooks_reflections_total\{outcome="([^"]+)"\} (\d+)/gm)]
    .filter((match) => !match[1]?.startsWith("skipped_"))
    .reduce((sum, match) => sum + Number(match[2]), 0);
}

/** The household's scenario: a turn and its reflection, a dream cycle, an explicit save approved and promoted. */
async function runScenario(): Promise<void> {
  // Something lasting about the person, not an explicit save (that one is stored at once and not reflected).
  await sendMessage(fixture.gateway.endpoints, {
    text: "My daughter Sofie is allergic to peanuts, so we never cook with them.",
    user: "alice",
    timeoutMs: 240_000,
  });
  await waitFor(async () => (reflectionRuns(await readMetrics(fixture.metricsUrl)) > 0 ? true : undefined), {
    what: "a reflection run through the plugin",
    timeoutMs: 600_000,
    intervalMs: 1_000,
  });

  // A dream cycle asked for as `kubectl remram dream now nightly` does (mirroring proposals needs the schedule).
  const schedules = `${api}/dreamschedules`;
  await client.create(schedules, {
    apiVersion: "remram.io/v1alpha1",
    kind: "DreamSchedule",
    metadata: { name: "nightly", namespace },
    spec: { applianceRef: { name: "box" }, schedule: "0 3 * * *", timeZone: "Europe/Berlin" },
  });
  const requestedAt = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  await client.mergePatch(`${schedules}/nightly`, {
    metadata: { annotations: { "remram.io/dream-requested-at": requestedAt } },
  });
  await waitFor(
    async () => {
      const current = await client.get<KubeObject & { status?: { lastRun?: { outcome?: string } } }>(
        `${schedules}/nightly`,
      );
      return current?.status?.lastRun?.outcome === "Succeeded" ? true : undefined;
    },
    { what: "the requested dream cycle", timeoutMs: 120_000, intervalMs: 500 },
  );

  // "Remember for the family": a proposal at once, mirrored, approved by alice, promoted into git.
  const saved = await fetch(`${testbed.cortexUrl}/remember`, {
    method: "POST",
    headers: { authorization: `Bearer ${cortexCredentials.gateway}`, "content-type": "application/json" },
    body: JSON.stringify({
      principal: { userId: "alice", householdId: "home", agentId: "main" },
      statement: "The water main valve is behind the washing machine",
      type: "fact",
      scope: "household",
      sessionId: "s-save",
      turnId: "t-save",
    }),
  });
  expect(saved.status, await saved.clone().text()).toBe(200);
  const proposalId = ((await saved.json()) as { proposal: { id?: string } }).proposal.id;
  const mirror = await waitFor(
    async () =>
      (await client.get<{ items: Proposal[] }>(`${api}/artifactproposals`))?.items.find(
        (item) => item.spec.proposalId === proposalId && item.status?.phase === "Pending",
      ),
    { what: "the save's ArtifactProposal", timeoutMs: 60_000, intervalMs: 500 },
  );
  await grantApprover(client, namespace, "alice");
  await client
    .as("alice", ["system:authenticated"])
    .jsonPatch(
      `${api}/artifactproposals/${mirror.metadata.name}/status`,
      decisionPatch(mirror, "Approved", "alice", new Date().toISOString().replace(/\.\d{3}Z$/, "Z")),
    );
  await waitFor(
    async () => {
      const current = await client.get<Proposal>(`${api}/artifactproposals/${mirror.metadata.name}`);
      return current?.status?.phase === "Promoted" ? true : undefined;
    },
    { what: "the approved save promoted", timeoutMs: 60_000, intervalMs: 500 },
  );
  // Everyday traffic after the counters exist, so rates and latency quantiles have increases to show: a second
  // turn through the gateway, then a retrieval and a captured turn every half second for 20 s.
  await sendMessage(fixture.gateway.endpoints, {
    text: "What should we keep in mind when cooking for Sofie?",
    user: "alice",
    timeoutMs: 240_000,
  });
  const headers = {
    authorization: `Bearer ${cortexCredentials.gateway}`,
    "content-type": "application/json",
  };
  const principal = { userId: "alice", householdId: "home", agentId: "main" };
  for (let index = 0; index < 40; index++) {
    const retrieve = await fetch(`${testbed.cortexUrl}/retrieve`, {
      method: "POST",
      headers,
      body: JSON.stringify({ principal, requestText: "what is Sofie allergic to?", tokenBudget: 400 }),
    });
    expect(retrieve.status).toBe(200);
    const ingest = await fetch(`${testbed.cortexUrl}/ingest`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        events: [
          {
            kind: "turn",
            scope: "user",
            owner: { userId: "alice", householdId: "home" },
            role: "user",
            sessionId: "s-traffic",
            turnId: `t${index}`,
            text: `Shopping list item ${index}: oat milk`,
          },
        ],
      }),
    });
    expect(ingest.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  // A few more scrapes after the last step, so every rate() has two samples past it.
  await new Promise((resolve) => setTimeout(resolve, 4_000));
}

/** Whether a query answered with at least one finite value (a quantile of no traffic answers NaN). */
function hasValues(results: PanelResults): boolean {
  return results.some((series) =>
    series.some((each) => each.values.some(([, value]) => Number.isFinite(Number(value)))),
  );
}

/** A panel query as Grafana sends it with the dashboard's variables set: this namespace, every controller. */
function expand(expr: string, dashboardNamespace: string): string {
  return expr.replaceAll("$namespace", dashboardNamespace).replaceAll("$controller", ".*");
}

async function panelResults(
  dashboard: DashboardJson,
  dashboardNamespace: string,
  range?: { start: number; end: number; stepSeconds: number },
): Promise<PanelResults[]> {
  return Promise.all(
    dashboard.panels.map((panel) =>
      Promise.all(
        panel.targets.map((target) =>
          queryPrometheus(prometheus.endpoints.url, expand(target.expr, dashboardNamespace), range),
        ),
      ),
    ),
  );
}

describe("the chart's dashboards on a real Prometheus", () => {
  it(
    "show data in every panel the household's scenario exercises, and Prometheus accepts every query",
    async () => {
      await runScenario();
      const dashboards: [string, string][] = [
        ["knowledge.json", namespace],
        ["operator.json", defaultOperatorNamespace],
      ];
      const empty: string[] = [];
      const filledButListed: string[] = [];
      for (const [file, dashboardNamespace] of dashboards) {
        const dashboard = JSON.parse(readFileSync(join(dashboardsDir, file), "utf8")) as DashboardJson;
        const results = await panelResults(dashboard, dashboardNamespace);
        dashboard.panels.forEach((panel, index) => {
          const hasData = hasValues(results[index] ?? []);
          if (!hasData && !(panel.title in notExercised)) empty.push(`${file}: ${panel.title}`);
          if (hasData && panel.title in notExercised) filledButListed.push(`${file}: ${panel.title}`);
        });
      }
      console.log(
        `panels without data by design: ${Object.entries(notExercised)
          .map(([title, why]) => `${title} (${why})`)
          .join("; ")}`,
      );
      expect(empty, "exercised panels without data").toEqual([]);
      if (filledButListed.length > 0)
        console.log(`listed as not exercised, with data: ${filledButListed.join("; ")}`);

      // The picture: the knowledge dashboard over the scenario, from the same Prometheus.
      const knowledge = JSON.parse(
        readFileSync(join(dashboardsDir, "knowledge.json"), "utf8"),
      ) as DashboardJson;
      const range = { start: scenarioStart, end: Date.now(), stepSeconds: 5 };
      const png = renderDashboardPng(knowledge, await panelResults(knowledge, namespace, range));
      const pictures = join(runDir, "dashboards");
      mkdirSync(pictures, { recursive: true });
      writeFileSync(join(pictures, "knowledge.png"), png);
      // A PNG signature and more than a blank page's worth of drawing.
      expect(png.subarray(1, 4).toString()).toBe("PNG");
      expect(png.length).toBeGreaterThan(30_000);
    },
    scenarioTimeoutMs,
  );

  it("give remram-app's diagnostics page the scenario's picture, from Prometheus and from the app's own scrapes", async () => {
    const own = appScrapes.view();
    expect(own.problems).toEqual([]);
    const retrievals = own.series.reduce((sum, reading) => sum + reading.retrievals, 0);
    // The scenario's 40 direct retrievals and the gateway's own before each turn.
    expect(retrievals).toBeGreaterThanOrEqual(40);
    expect(own.series.some((reading) => reading.retrievalP95Ms !== null && reading.retrievalP95Ms > 0)).toBe(
      true,
    );
    expect(own.series.some((reading) => reading.captureBacklog !== null)).toBe(true);
    expect(own.escalations.length).toBeGreaterThan(0);

    // The production defaults: a day at five-minute steps.
    const metrics = new DiagnosticsMetrics(appScrapes, { url: prometheus.endpoints.url, namespace });
    const fromPrometheus = await metrics.view();
    expect(fromPrometheus.source).toBe("prometheus");
    expect(fromPrometheus.problems).toEqual([]);
    expect(fromPrometheus.series.some((reading) => reading.retrievalP95Ms !== null)).toBe(true);
    expect(fromPrometheus.captureBacklog).not.toBeNull();
    // Prometheus extrapolates increases and takes a series' first sample as its baseline (a decision made once is
    // no increase to it), so its counts differ a little; every decision it shows, the app's scrapes saw too.
    expect(fromPrometheus.escalations.length).toBeGreaterThan(0);
    expect(own.escalations.map((count) => count.label)).toEqual(
      expect.arrayContaining(fromPrometheus.escalations.map((count) => count.label)),
    );

    // A Prometheus that does not answer: the app's own scrapes, and the page says why.
    const down = await new DiagnosticsMetrics(appScrapes, { url: "http://127.0.0.1:9/", namespace }).view();
    expect(down.source).toBe("metrics");
    expect(down.problems[0]).toMatch(/^Prometheus at http:\/\/127\.0\.0\.1:9\/ did not answer/);
    expect(down.series.length).toBeGreaterThanOrEqual(own.series.length);
  });
});
