/**
 * remram-app end to end, in a real browser (Debian's Chromium driven by Playwright) against the real app on the test
 * bed (REMRAM_TESTBED=kubernetes,opensearch): the real API server with the CRDs, the chart's household roles and the
 * approval policy; the operator and Cortex in-process under their real credentials; household members signed in with
 * the tokens `kubectl remram user add` issued them. Screenshots of each page go to .remram/run/app-screenshots
 * (docs/app/ keeps a copy).
 */
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appIdentity } from "../../operator/test/app-identity.js";
import { applyChartRoles } from "../../operator/test/chart-roles.js";
import { runCli } from "../../operator/test/cli-main.js";
import { adminClient, createNamespace, installCrds, runSuffix } from "../../operator/test/cluster.js";
import {
  cortexCredentials,
  type OperatorAndCortex,
  startOperatorAndCortex,
} from "../../operator/test/operator-cortex.js";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { repoRoot } from "../../test/harness/src/paths.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { buildApp } from "../src/app.js";
import { appConfig } from "../src/config.js";

const { client: admin, kubeConfig } = adminClient();
const kubernetes = testbedEndpoints("kubernetes");
const suffix = runSuffix();
const namespace = `app-e2e-${suffix}`;
const api = `/apis/remram.io/v1alpha1/namespaces/${namespace}`;
const screenshots = join(repoRoot, ".remram/run/app-screenshots");

const fact = (key: string, owner: string | undefined, statement: string) => ({
  kind: "knowledge",
  provenanceKey: key,
  scope: owner === undefined ? "household" : "user",
  owner: owner === undefined ? { householdId: "home" } : { userId: owner },
  privacy: owner === undefined ? "household" : "private",
  statement,
  type: "fact",
  source: "user",
  confidence: 0.8,
});

let env: OperatorAndCortex;
let app: FastifyInstance;
let appUrl = "";
let browser: Browser;
const tokens: Record<string, string> = {};
const removeRoles: (() => Promise<void>)[] = [];

/** `kubectl remram user add MEMBER [flags]` as the cluster admin; the token it printed. */
async function addUser(member: string, ...flags: string[]): Promise<string> {
  const { code, stdout, stderr } = await runCli([
    "user",
    "add",
    member,
    ...flags,
    "--kubeconfig",
    kubernetes.kubeconfig,
    "-n",
    namespace,
  ]);
  expect(code, stderr).toBe(0);
  return stdout.trim();
}

/** What the page shows, waited for: a page fetches after it renders, on a machine busy with other suites. */
const eventually = <T>(read: () => Promise<T>, timeout = 15_000) =>
  expect.poll(read, { timeout, interval: 100 });

async function signedIn(member: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 420, height: 900 } });
  const page = await context.newPage();
  await page.goto(appUrl);
  await page.getByLabel("Your token").fill(tokens[member] as string);
  await page.getByRole("button", { name: "Sign in" }).click();
  await eventually(() => page.getByRole("heading", { level: 1, name: "My memory" }).count()).toBe(1);
  return { context, page };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * What axe-core finds against WCAG 2 A and AA on the page as it is now, serious or critical: contrast, names,
 * labels, landmarks. Playwright evaluates through the DevTools protocol, which the page's CSP does not govern.
 */
async function accessibilityProblems(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // In the page: its globals, without the DOM's types in this test's compilation.
    const { axe, document } = globalThis as unknown as {
      axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> };
      document: unknown;
    };
    const results = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa"] } });
    return results.violations;
  });
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map(
      (violation) =>
        `${violation.id} (${violation.help}): ${violation.nodes.map((node) => JSON.stringify(node.target)).join(", ")}`,
    );
}

const article = (page: Page, statement: string) => page.getByRole("article", { name: statement });

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  await installCrds(admin);
  await createNamespace(admin, namespace);
  removeRoles.push((await applyChartRoles(admin, "remram-app-e2e")).remove);
  env = await startOperatorAndCortex(admin, kubeConfig, namespace, suffix, { householdId: "home" });
  await admin.mergePatch(`${api}/remramappliances/box`, {
    spec: { household: { id: "home", members: [{ id: "alice" }, { id: "bob" }] } },
  });
  // The schedule whose reconciler mirrors Cortex's pending proposals as ArtifactProposals; it also shows in diagnostics.
  await admin.create(`${api}/dreamschedules`, {
    apiVersion: "remram.io/v1alpha1",
    kind: "DreamSchedule",
    metadata: { name: "nightly", namespace },
    spec: { applianceRef: { name: "box" }, schedule: "0 3 * * *", timeZone: "Europe/Berlin" },
  });
  tokens.alice = await addUser("alice", "--approver");
  tokens.bob = await addUser("bob", "--admin");
  const ingested = await fetch(`${env.cortexUrl}/ingest`, {
    method: "POST",
    headers: { authorization: `Bearer ${cortexCredentials.gateway}`, "content-type": "application/json" },
    body: JSON.stringify({
      events: [
        fact("a-peanuts", "alice", "Alice is allergic to peanuts"),
        fact("a-train", "alice", "Alice takes the 7:40 train to work"),
        fact("b-cello", "bob", "Bob plays the cello on Tuesdays"),
        fact("b-garden", "bob", "Bob grows tomatoes in the back garden"),
        fact("h-bins", undefined, "The recycling bins go out on Thursday night"),
      ],
    }),
  });
  expect(ingested.status, await ingested.text()).toBe(200);
  app = await buildApp({
    config: appConfig.parse({
      // As the appliance serves it: under /remram/, the prefix its front door routes to the app.
      basePath: "/remram/",
      namespace,
      appliance: "box",
      cortexUrl: env.cortexUrl,
      cortexToken: cortexCredentials.app,
      secureCookies: false,
      identityCacheMs: 0,
      // Cortex's /metrics read every second, so the diagnostics page has readings to plot within the test.
      metricsIntervalMs: 1_000,
      logLevel: "silent",
    }),
    kubeConfig: await appIdentity(admin, kubeConfig, namespace, "box"),
    logger: false,
  });
  appUrl = `${await app.listen({ host: "127.0.0.1", port: 0 })}/remram/`;
  browser = await chromium.launch({
    executablePath: process.env.REMRAM_CHROMIUM ?? "/usr/bin/chromium",
    // Root on the test machine: Chromium's sandbox needs an unprivileged user.
    args: ["--no-sandbox"],
  });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await env?.stop();
  await admin.delete(`/api/v1/namespaces/${namespace}`);
  for (const remove of removeRoles) await remove();
});

describe("remram-app in a browser", () => {
  it("signs alice in and shows her knowledge and the household's, never bob's", async () => {
    const { context, page } = await signedIn("alice");
    await eventually(() => article(page, "Alice is allergic to peanuts").count()).toBe(1);
    expect(await article(page, "The recycling bins go out on Thursday night").count()).toBe(1);
    expect(await page.getByText("Bob plays the cello").count()).toBe(0);
    expect(await page.getByRole("link", { name: "Diagnostics" }).count()).toBe(0);
    await page.screenshot({ path: join(screenshots, "memory.png"), fullPage: true });
    expect(await accessibilityProblems(page)).toEqual([]);
    await context.close();
  });

  it("shows bob his own knowledge, not alice's", async () => {
    const { context, page } = await signedIn("bob");
    await eventually(() => article(page, "Bob plays the cello on Tuesdays").count()).toBe(1);
    expect(await page.getByText("Alice is allergic").count()).toBe(0);
    await context.close();
  });

  it("refuses a token that is no member's and says why", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(appUrl);
    await page.screenshot({ path: join(screenshots, "sign-in.png") });
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByLabel("Your token").fill("not-a-kubernetes-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await eventually(() => page.getByRole("alert").textContent()).toMatch(/credential is not valid/);
    await context.close();
  });

  it("corrects one of alice's items: the old one stays, invalidated, pointing at the correction", async () => {
    const { context, page } = await signedIn("alice");
    const train = article(page, "Alice takes the 7:40 train to work");
    await eventually(() => train.count()).toBe(1);
    await train.getByRole("button", { name: "Correct" }).click();
    await page.getByLabel("Corrected statement").fill("Alice takes the 8:10 train to work");
    await page.getByRole("button", { name: "Save correction" }).click();
    await eventually(() => article(page, "Alice takes the 8:10 train to work").count()).toBe(1);
    // The page keeps the old one in place, marked; Cortex's own listing says the same after a reload.
    expect(await train.textContent()).toMatch(/No longer true since/);
    await page.reload();
    await eventually(() => article(page, "Alice takes the 8:10 train to work").count()).toBe(1);
    expect(await train.count()).toBe(0);
    await page.getByLabel("Invalidated").check();
    await page.getByRole("button", { name: "Search" }).click();
    const old = article(page, "Alice takes the 7:40 train to work");
    await eventually(() => old.count()).toBe(1);
    expect(await old.textContent()).toMatch(/No longer true since/);
    expect(await old.textContent()).toMatch(/8:10 train/);
    await page.screenshot({ path: join(screenshots, "memory-corrected.png"), fullPage: true });
    expect(await accessibilityProblems(page)).toEqual([]);
    await context.close();
  });

  it("lets alice approve a proposal and shows the commit; bob, without the verb, is refused", async () => {
    const remembered = await fetch(`${env.cortexUrl}/remember`, {
      method: "POST",
      headers: { authorization: `Bearer ${cortexCredentials.gateway}`, "content-type": "application/json" },
      body: JSON.stringify({
        principal: { userId: "alice", householdId: "home", agentId: "main" },
        statement: "The spare house key is with the neighbours at number 12",
        type: "fact",
        scope: "household",
        sessionId: "s-e2e",
        turnId: "t-e2e",
      }),
    });
    const saved = await remembered.text();
    expect(remembered.status, saved).toBe(200);
    expect((JSON.parse(saved) as { proposal: { status: string } }).proposal.status, saved).toBe("pending");
    await waitFor(
      async () => {
        const list = await admin.get<{ items: { status?: { phase?: string } }[] }>(
          `${api}/artifactproposals`,
        );
        return list?.items.some((item) => item.status?.phase === "Pending") ? true : undefined;
      },
      { what: "the explicit save's ArtifactProposal mirrored", timeoutMs: 60_000, intervalMs: 500 },
    );

    const bob = await signedIn("bob");
    await bob.page.getByRole("link", { name: "Proposals" }).click();
    await bob.page.getByRole("button", { name: "Approve" }).click();
    // RBAC refuses first: bob's roles grant no patch on the proposals' status.
    await eventually(() => bob.page.getByRole("alert").textContent()).toMatch(
      /cannot patch resource "artifactproposals\/status".*kubectl remram user add bob --approver/s,
    );
    await bob.context.close();

    const alice = await signedIn("alice");
    await alice.page.getByRole("link", { name: "Proposals" }).click();
    await alice.page.getByLabel("Comment (optional)").fill("yes, number 12");
    await alice.page.getByRole("button", { name: "Approve" }).click();
    await expect
      .poll(
        async () => {
          await alice.page.reload();
          await alice.page.getByRole("link", { name: "Proposals" }).click();
          return alice.page.getByText("Committed to the workspace as").count();
        },
        { timeout: 60_000, interval: 1_000 },
      )
      .toBe(1);
    expect(await alice.page.getByText(/Approved by system:serviceaccount:.*:box-member-alice/).count()).toBe(
      1,
    );
    await alice.page.screenshot({ path: join(screenshots, "proposals.png"), fullPage: true });
    expect(await accessibilityProblems(alice.page)).toEqual([]);
    await alice.context.close();
  });

  it("shows bob, a household admin, the diagnostics page with the retrievals Cortex served plotted", async () => {
    // What the gateway's hooks do before a turn: retrievals, each one in Cortex's latency histogram.
    for (let index = 0; index < 5; index++) {
      const retrieved = await fetch(`${env.cortexUrl}/retrieve`, {
        method: "POST",
        headers: { authorization: `Bearer ${cortexCredentials.gateway}`, "content-type": "application/json" },
        body: JSON.stringify({
          principal: { userId: "bob", householdId: "home", agentId: "main" },
          requestText: "when does Bob play the cello?",
          tokenBudget: 400,
        }),
      });
      expect(retrieved.status).toBe(200);
    }
    // Two scrapes a second apart make a reading.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const { context, page } = await signedIn("bob");
    await page.getByRole("link", { name: "Diagnostics" }).click();
    await eventually(() => page.getByRole("heading", { level: 1, name: "Diagnostics" }).count()).toBe(1);
    const latency = page.getByRole("img", { name: /^Retrieval latency,/ });
    await eventually(() => latency.count(), 15_000).toBe(1);
    expect(await latency.getAttribute("aria-label")).toMatch(
      /p50: now [\d.]+ ms, highest [\d.]+ ms; p95: now/,
    );
    const summary = page.getByText(
      /From the components' \/metrics, read by the app, over the last .*: 5 retrievals/,
    );
    await eventually(() => summary.count(), 15_000).toBe(1);
    // No gateway in this test bed: the page says so instead of plotting nothing silently.
    expect(await page.getByText("gateway's metrics: no address configured").count()).toBe(1);
    await page.screenshot({ path: join(screenshots, "diagnostics.png"), fullPage: true });
    await page
      .locator("section[aria-labelledby=metrics-heading]")
      .screenshot({ path: join(screenshots, "diagnostics-metrics.png") });
    expect(await accessibilityProblems(page)).toEqual([]);
    await context.close();
  });

  it("forgets everything of bob's on his typed confirmation, and nothing of his is left", async () => {
    const { context, page } = await signedIn("bob");
    await eventually(() => article(page, "Bob grows tomatoes in the back garden").count()).toBe(1);
    await page.getByRole("button", { name: "Forget everything…" }).click();
    await page.getByLabel(/Type your member id/).fill("bob");
    await page.getByRole("button", { name: "Yes, forget everything" }).click();
    await eventually(() => page.getByText("Bob grows tomatoes").count(), 30_000).toBe(0);
    const mine = await page.evaluate(async () => {
      const response = await fetch("api/knowledge?scope=user&status=active,demoted,invalidated");
      return (await response.json()) as { total: number };
    });
    expect(mine.total).toBe(0);
    // The household's knowledge is not bob's to erase: it stays.
    await page.reload();
    await eventually(() => article(page, "The recycling bins go out on Thursday night").count()).toBe(1);
    await context.close();
  });
});
