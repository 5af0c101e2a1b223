import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { chartDir, isMarkdown, runbooksDir } from "./chart-files.js";

const repoRoot = join(import.meta.dirname, "../../..");
const rulesTemplate = readFileSync(join(repoRoot, chartDir, "templates/prometheusrule.yaml"), "utf8");
const defaults = load(readFileSync(join(repoRoot, chartDir, "values.yaml"), "utf8")) as {
  metrics: { prometheusRule: Record<string, unknown> };
};

interface AlertRule {
  name: string;
  /** The rule's lines in the template, from `- alert:` to the next rule. */
  block: string;
}

/** The template is Go-templated YAML, so the rules are found by their text, as a reader of the file sees them. */
function alertRules(template: string): AlertRule[] {
  const starts = [...template.matchAll(/^( *)- (alert|record): (\S+)$/gm)];
  return starts.flatMap((start, index) => {
    if (start[2] !== "alert") return [];
    const end = starts[index + 1]?.index ?? template.length;
    return [{ name: start[3] as string, block: template.slice(start.index, end) }];
  });
}

/** The rule's expr with the chart's default values put in, whitespace collapsed. */
function defaultExpr(block: string): string {
  const inline = block.match(/^ +expr: (?!\|)(.+)$/m)?.[1];
  const folded = block.match(/^( +)expr: \|-?\n((?:\1 {2}.*\n)+)/m)?.[2];
  const expr = inline ?? folded ?? "";
  return expr
    .replace(/\{\{ \.Values\.metrics\.prometheusRule\.(\w+) \}\}/g, (_, key: string) =>
      String(defaults.metrics.prometheusRule[key]),
    )
    .replace(/\s+/g, " ")
    .trim();
}

const runbook = (name: string): string | undefined => {
  try {
    return readFileSync(join(repoRoot, runbooksDir, `${name}.md`), "utf8");
  } catch {
    return undefined;
  }
};

const alerts = alertRules(rulesTemplate);

describe("the runbooks of the chart's alerts", () => {
  it("cover the alerts the template defines, whose links share one trimmed base URL", () => {
    expect(alerts.length).toBeGreaterThanOrEqual(12);
    expect(rulesTemplate).toContain(
      '{{- $runbooks := .Values.metrics.prometheusRule.runbookBaseUrl | trimSuffix "/" }}',
    );
  });

  it.each(alerts.map((alert) => [alert.name, alert] as const))(
    "%s has docs/runbooks/<name>.md with Meaning, Impact, Diagnosis and Fix, quoting its expr",
    (name, alert) => {
      const text = runbook(name);
      expect(text, `docs/runbooks/${name}.md`).toBeDefined();
      expect(text).toMatch(new RegExp(`^# ${name}$`, "m"));
      const headings = [...(text ?? "").matchAll(/^## (.+)$/gm)].map((match) => match[1]);
      expect(headings).toEqual(["Meaning", "Impact", "Diagnosis", "Fix"]);
      const expr = defaultExpr(alert.block);
      expect(expr).not.toBe("");
      expect((text ?? "").replace(/\s+/g, " "), "the runbook quotes the rule's current expr").toContain(expr);
    },
  );

  it.each(alerts.map((alert) => [alert.name, alert] as const))(
    "%s links <runbookBaseUrl>/<name>.md, and nothing while the base URL is unset",
    (name, alert) => {
      const links = [...alert.block.matchAll(/runbook_url: (.+)$/gm)].map((match) => match[1]);
      expect(links).toEqual([`{{ $runbooks }}/${name}.md`]);
      expect(alert.block).toMatch(/\{\{- if \$runbooks \}\}\n +runbook_url: /);
    },
  );

  it("has a page only for an alert that exists, each listed in the README", () => {
    const pages = readdirSync(join(repoRoot, runbooksDir))
      .filter(isMarkdown)
      .filter((file) => file !== "README.md");
    expect(pages.sort()).toEqual(alerts.map((alert) => `${alert.name}.md`).sort());
    const readme = runbook("README") ?? "";
    for (const page of pages) expect(readme, page).toContain(`](${page})`);
  });

  it("link each other only to pages that exist", () => {
    for (const file of readdirSync(join(repoRoot, runbooksDir)).filter(isMarkdown)) {
      const text = readFileSync(join(repoRoot, runbooksDir, file), "utf8");
      for (const [, target] of text.matchAll(/\]\(([A-Za-z]+\.md)\)/g)) {
        expect(runbook((target as string).replace(/\.md$/, "")), `${file} → ${target}`).toBeDefined();
      }
    }
  });
});
