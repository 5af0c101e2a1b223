// The GitHub workflows cannot run here (no runner, no registry): what can be held to account without one is held
// here. actionlint (make lint) checks their syntax, expressions and run scripts; this checks their policy.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { archiveName, archiveUri } from "../../kubectl-remram/src/krew.js";
import { repoRoot } from "./plan.js";

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}
interface Job {
  permissions?: Record<string, string>;
  steps: Step[];
  strategy?: { matrix: Record<string, unknown> };
  env?: Record<string, string>;
}
interface Workflow {
  on: Record<string, unknown>;
  permissions?: unknown;
  env?: Record<string, string>;
  jobs: Record<string, Job>;
}

const workflowDir = join(repoRoot, ".github", "workflows");
const read = (path: string) => readFileSync(join(repoRoot, path), "utf8");
const workflow = (name: string) => load(read(`.github/workflows/${name}`)) as Workflow;
const ci = workflow("ci.yml");
const release = workflow("release.yml");
const setupAction = load(read(".github/actions/setup/action.yml")) as { runs: { steps: Step[] } };
const files = [
  ...readdirSync(workflowDir).map((name) => `.github/workflows/${name}`),
  ".github/actions/setup/action.yml",
];
/** A GitHub expression, `${{ inner }}`. */
const gh = (inner: string) => `\${{ ${inner} }}`;
const steps = (flow: Workflow) => Object.values(flow.jobs).flatMap((job) => job.steps);
const runs = (flow: Workflow) => steps(flow).flatMap((step) => (step.run ? [step.run] : []));

describe("the actions the workflows use", () => {
  it("are pinned to a full commit, the version in a comment, the same everywhere", () => {
    const pins = new Map<string, string>();
    for (const file of files) {
      for (const [index, line] of read(file).split("\n").entries()) {
        const uses = /^\s*(?:- )?uses:\s*(\S+)(.*)$/.exec(line);
        if (uses?.[1] === undefined || uses[1].startsWith("./")) continue;
        const where = `${file}:${index + 1}`;
        const pin = /^([\w.-]+\/[\w.-]+)@([0-9a-f]{40})$/.exec(uses[1]);
        expect(pin, `${where}: ${uses[1]} is not owner/repo@<full commit sha>`).not.toBeNull();
        const version = /^\s+# (v\d+\.\d+\.\d+)$/.exec(uses[2] ?? "")?.[1];
        expect(version, `${where}: no "# vX.Y.Z" comment`).toBeDefined();
        const pinned = `${pin?.[2]} ${version}`;
        expect(pins.get(pin?.[1] ?? "") ?? pinned, `${where}: pinned differently elsewhere`).toBe(pinned);
        pins.set(pin?.[1] ?? "", pinned);
      }
    }
    expect([...pins.keys()].sort()).toContain("actions/checkout");
  });

  it("set up Node at hack/versions.env's version, never a literal one", () => {
    const setupNodes = [...steps(ci), ...steps(release), ...setupAction.runs.steps].filter((step) =>
      step.uses?.startsWith("actions/setup-node@"),
    );
    expect(setupNodes.length).toBeGreaterThan(0);
    for (const step of setupNodes) expect(String(step.with?.["node-version"])).toMatch(/^\$\{\{ .+ \}\}$/);
    expect(read(".github/actions/setup/action.yml")).toContain("<hack/versions.env");
  });
});

describe("permissions", () => {
  it("are none by default and granted per job, each write only where it is needed", () => {
    const granted: Record<string, string[]> = {};
    for (const [file, flow] of [
      ["ci", ci],
      ["release", release],
    ] as const) {
      expect(flow.permissions, file).toEqual({});
      for (const [name, job] of Object.entries(flow.jobs)) {
        expect(job.permissions, `${file}/${name}`).toBeDefined();
        for (const [scope, level] of Object.entries(job.permissions ?? {}))
          if (level === "write") granted[scope] = [...(granted[scope] ?? []), `${file}/${name}`];
      }
    }
    expect(granted).toEqual({
      packages: ["release/images", "release/chart"],
      "id-token": ["release/images", "release/chart", "release/npm"],
      contents: ["release/github-release"],
    });
  });
});

describe("CI", () => {
  it("runs on every push and pull request", () => {
    expect(Object.keys(ci.on).sort()).toEqual(["pull_request", "push"]);
  });

  it("runs every command of the Makefile's lint target and the unit tier", () => {
    const makefile = read("Makefile");
    const recipe = (target: string) =>
      (new RegExp(`^${target}:.*\\n((?:\\t.*\\n)+)`, "m").exec(makefile)?.[1] ?? "")
        .split("\n")
        .map((line) => line.trim())
        .filter(Boolean);
    const commands = [...recipe("lint"), ...recipe("test-unit")];
    expect(commands).toContain("actionlint");
    expect(commands).toContain("vitest run --project unit");
    const ciRuns = runs(ci).flatMap((run) => run.split("\n").map((line) => line.trim()));
    for (const command of commands) expect(ciRuns, command).toContain(command);
  });
});

describe("the release", () => {
  it("runs on a v* tag only", () => {
    expect(release.on).toEqual({ push: { tags: ["v*"] } });
  });

  it("takes every registry from the repository's variables", () => {
    for (const key of ["IMAGE_REGISTRY", "IMAGE_NAMESPACE", "CHART_REGISTRY"])
      expect(release.env?.[key]).toBe(`\${{ vars.${key} }}`);
    expect(release.env?.CHART_NAMESPACE).toMatch(/^\$\{\{ vars\.CHART_NAMESPACE \|\| /);
    for (const step of steps(release)) {
      for (const key of ["registry", "registry-url"])
        if (step.with?.[key] !== undefined)
          expect(String(step.with[key])).toMatch(/^\$\{\{ vars\.[A-Z_]+ \}\}$/);
    }
  });

  it("calls hack/release/cli.ts only with commands and flags it has", () => {
    const cli = read("hack/release/cli.ts");
    const calls = runs(release).flatMap((run) => [
      ...run
        .replace(/\n/g, " ")
        .matchAll(/tsx hack\/release\/cli\.ts (\w+)((?: +(?:--[\w-]+|"[^"]*"|[^\s-]\S*))*)/g),
    ]);
    expect(calls.map((call) => call[1])).toEqual(["plan", "context", "chart", "archive", "plugin"]);
    for (const call of calls) {
      expect(cli).toContain(`tsx hack/release/cli.ts ${call[1]} `);
      for (const flag of call[2]?.match(/--[\w-]+/g) ?? [])
        expect(cli, `${call[1]} ${flag}`).toContain(`${flag}`);
    }
  });

  it("builds its matrices from the plan", () => {
    expect(release.jobs.images?.strategy?.matrix.image).toBe(gh("fromJSON(needs.plan.outputs.images)"));
    expect(release.jobs.plugin?.strategy?.matrix.include).toBe(gh("fromJSON(needs.plan.outputs.plugin)"));
  });

  it("links the alerts to the tagged docs/runbooks, where a runbook exists for each", () => {
    const chartStep = release.jobs.chart?.steps.find((step) => step.run?.includes("cli.ts chart"));
    expect(chartStep?.env?.RUNBOOKS).toBe(
      `${gh("github.server_url")}/${gh("github.repository")}/blob/${gh("github.ref_name")}/docs/runbooks`,
    );
    const rules = read("charts/remram-operator/templates/prometheusrule.yaml");
    const linked = [...rules.matchAll(/runbook_url: \{\{ \$runbooks \}\}\/(\w+\.md)/g)].map(
      (match) => match[1],
    );
    expect(linked.length).toBeGreaterThan(0);
    for (const runbook of linked)
      expect(existsSync(join(repoRoot, "docs", "runbooks", runbook ?? "")), runbook).toBe(true);
  });

  it("renders the krew manifest with the URLs the GitHub release serves its assets at", () => {
    const step = release.jobs["plugin-assets"]?.steps.find((each) => each.run?.includes("cli.ts plugin"));
    const base = step?.env?.BASE_URL;
    expect(base).toBe(`${gh("github.server_url")}/${gh("github.repository")}/releases/download`);
    // <server>/<repository>/releases/download/<tag>/<asset>, the tag being v<version> (the plan checks it).
    expect(archiveUri(base ?? "", "1.2.3", "linux/arm64")).toBe(
      `${base}/v1.2.3/${archiveName("1.2.3", "linux/arm64")}`,
    );
  });

  it("hands each job's artifacts to the next under matching names", () => {
    const uploads = steps(release).flatMap((step) =>
      step.uses?.startsWith("actions/upload-artifact@") ? [String(step.with?.name)] : [],
    );
    const downloads = steps(release).flatMap((step) =>
      step.uses?.startsWith("actions/download-artifact@")
        ? [String(step.with?.name ?? step.with?.pattern)]
        : [],
    );
    expect(uploads).toEqual([
      `digest-${gh("matrix.image.name")}`,
      "chart",
      `plugin-${gh("matrix.os")}-${gh("matrix.arch")}`,
      "release-assets",
    ]);
    expect(downloads).toEqual(["digest-*", "plugin-*", "release-assets", "chart", "release-assets"]);
  });
});
