// The chart as the real Helm binary sees it, without a cluster: values.schema.json refuses a wrong or unknown value
// with Helm's own message naming the key, `helm lint --strict` passes on the defaults and on ci/everything-values.yaml,
// and NOTES.txt says what the values enable (rendered with Helm's `tpl`, since `helm template` drops NOTES).
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { load, loadAll } from "js-yaml";
import { afterAll, describe, expect, it } from "vitest";
import { binPath, repoRoot, runDir } from "../../test/harness/src/paths.js";

const run = promisify(execFile);
const chart = join(repoRoot, "charts/remram-operator");
const everything = join(chart, "ci/everything-values.yaml");
mkdirSync(runDir, { recursive: true });
const scratch = mkdtempSync(join(runDir, "chart-values-"));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Helm's exit status and everything it printed. */
async function helm(...args: string[]): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run(binPath("helm"), args, { maxBuffer: 16 * 1024 * 1024 });
    return { ok: true, output: `${stdout}${stderr}` };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

interface Rendered {
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
}

async function rendered(...args: string[]): Promise<Rendered[]> {
  const { ok, output } = await helm("template", "remram", chart, "-n", "remram-system", ...args);
  expect(ok, output).toBe(true);
  return (loadAll(output) as (Rendered | null)[]).filter((each): each is Rendered => each !== null);
}

/** A copy of the chart with one extra template that renders NOTES.txt through `tpl` into a ConfigMap. */
const notesChart = join(scratch, "remram-operator");
cpSync(chart, notesChart, { recursive: true });
cpSync(join(chart, "templates/NOTES.txt"), join(notesChart, "NOTES.txt"));
writeFileSync(
  join(notesChart, "templates/zz-notes.yaml"),
  'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: notes }\ndata:\n  notes: {{ tpl (.Files.Get "NOTES.txt") . | quote }}\n',
);

async function notes(...args: string[]): Promise<string> {
  const { ok, output } = await helm(
    "template",
    "remram",
    notesChart,
    "-n",
    "remram-system",
    "--show-only",
    "templates/zz-notes.yaml",
    ...args,
  );
  expect(ok, output).toBe(true);
  return (load(output) as { data: { notes: string } }).data.notes;
}

describe("the chart's values schema under Helm", () => {
  it.each([
    ["replicaCount=abc", /at '\/replicaCount': got string, want integer/],
    ["unknownKey=1", /additional properties 'unknownKey' not allowed/],
    ["metrics.serviceMonitor.interval=soon", /at '\/metrics\/serviceMonitor\/interval'/],
  ])("`helm template --set %s` fails naming the key", async (value, message) => {
    const { ok, output } = await helm("template", "remram", chart, "--set", value);
    expect(ok).toBe(false);
    expect(output).toContain("values don't meet the specifications of the schema");
    expect(output).toMatch(message);
  });

  it("fails `helm lint --strict` on a wrong value too", async () => {
    const { ok, output } = await helm("lint", "--strict", chart, "--set", "replicaCount=abc");
    expect(ok).toBe(false);
    expect(output).toMatch(/replicaCount/);
  });

  it.each([
    ["the defaults", []],
    ["ci/everything-values.yaml", ["-f", everything]],
  ])("passes `helm lint --strict` with %s, with no warning or error", async (_, args) => {
    const { ok, output } = await helm("lint", "--strict", chart, ...args);
    expect(ok, output).toBe(true);
    expect(output).toContain("0 chart(s) failed");
    expect(output).not.toMatch(/\[(WARNING|ERROR)\]/);
  });

  it("renders every optional part from ci/everything-values.yaml, with the runbook links", async () => {
    const objects = await rendered("-f", everything, "--api-versions", "monitoring.coreos.com/v1");
    const kinds = objects.map((object) => object.kind);
    for (const kind of ["ServiceMonitor", "PodMonitor", "PrometheusRule", "ConfigMap", "Pod"]) {
      expect(kinds, kind).toContain(kind);
    }
    const tests = objects.filter((object) => object.metadata.annotations?.["helm.sh/hook"] === "test");
    // Pods only: Helm's `test --logs` reads every test hook as a Pod.
    expect(tests.map((object) => object.kind)).toEqual(["Pod", "Pod"]);
    const groups = objects.find((object) => object.kind === "PrometheusRule")?.spec?.groups as {
      rules: { alert?: string; annotations?: Record<string, string> }[];
    }[];
    const alerts = groups.flatMap((group) => group.rules).filter((each) => each.alert);
    expect(alerts.length).toBeGreaterThan(0);
    for (const alert of alerts) {
      expect(alert.annotations?.runbook_url).toBe(
        `https://git.home.arpa/remram/blob/v0.1.0/docs/runbooks/${alert.alert}.md`,
      );
    }
  });

  it("leaves the test hooks and their NetworkPolicy rule out when tests are disabled", async () => {
    const objects = await rendered("--set", "tests.enabled=false");
    expect(objects.filter((object) => object.metadata.annotations?.["helm.sh/hook"])).toEqual([]);
    const policy = objects.find((object) => object.kind === "NetworkPolicy");
    expect(JSON.stringify(policy)).not.toContain("remram-operator-test");
  });
});

describe("NOTES.txt", () => {
  it("walks a first install through the next steps, for the namespaces the values name", async () => {
    const text = await notes("--set", "applianceNamespaces={home,guests}");
    expect(text).toMatch(/^Remram operator \S+ is installed in remram-system\./);
    expect(text).toContain("kubectl -n remram-system rollout status deployment/remram-operator");
    expect(text).toContain("helm test remram -n remram-system");
    for (const namespace of ["home", "guests"]) {
      expect(text).toContain(
        `kubectl create namespace ${namespace} --dry-run=client -o yaml | kubectl apply -f -`,
      );
    }
    expect(text).toContain("namespace: home\n");
    expect(text).toContain("kubectl -n home wait --for=condition=Ready remramappliance/moltbox");
    expect(text).toContain("(change it to home)");
    expect(text).toContain("get configmaps -l grafana_dashboard=1");
    expect(text).toContain("kubectl remram approve <name> -n home");
    // No monitoring API in a plain `helm template`: the chart says so instead of pointing at alerts.
    expect(text).toContain("the monitoring.coreos.com/v1 API is");
  });

  it("shows only what the values enable", async () => {
    const text = await notes(
      "--set",
      "metrics.dashboards.enabled=false,approverRole.create=false,tests.enabled=false",
      "--api-versions",
      "monitoring.coreos.com/v1",
    );
    expect(text).not.toContain("configmaps -l");
    expect(text).not.toContain("remram-approver");
    expect(text).not.toContain("helm test");
    expect(text).not.toContain("monitoring.coreos.com/v1 API is");
    expect(text).toContain("runbookBaseUrl is set");
  });

  it("says something shorter on upgrade", async () => {
    const text = await notes("--is-upgrade");
    expect(text).toMatch(/^Remram operator upgraded to \S+ \(chart \S+, revision \d+\)\./);
    expect(text).not.toContain("kubectl apply -f - <<EOF");
  });
});
