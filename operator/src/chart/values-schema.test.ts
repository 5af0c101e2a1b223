import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { load } from "js-yaml";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { loadSettings } from "../config.js";
import { chartDir, chartFiles, staleChartRunbooks } from "./chart-files.js";
import { chartValues, valuesJsonSchema } from "./values-schema.js";

const repoRoot = join(import.meta.dirname, "../../..");
const chart = join(repoRoot, chartDir);
const defaults = load(readFileSync(join(chart, "values.yaml"), "utf8")) as Record<string, unknown>;

type JsonNode = Record<string, unknown>;

/** Helm's coalescing of a values file over values.yaml: maps merge, everything else replaces. */
function overlay(base: unknown, over: unknown): unknown {
  const isMap = (value: unknown): value is Record<string, unknown> =>
    typeof value === "object" && value !== null && !Array.isArray(value);
  if (!isMap(base) || !isMap(over)) return over;
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) merged[key] = overlay(base[key], value);
  return merged;
}

/** The defaults with one value replaced, addressed by a dotted path. */
function withValue(path: string, value: unknown): unknown {
  const override = path
    .split(".")
    .reverse()
    .reduce<unknown>((inner, key) => ({ [key]: inner }), value);
  return overlay(defaults, override);
}

function issuesOf(values: unknown): z.core.$ZodIssue[] {
  return chartValues.safeParse(values).error?.issues ?? [];
}

/** JSON pointers of schema objects that would admit an unknown key, or properties without a description. */
function looseNodes(node: JsonNode, path: string, found: string[]): string[] {
  const properties = node.properties as Record<string, JsonNode> | undefined;
  if (properties !== undefined) {
    if (node.additionalProperties !== false) found.push(`${path} admits unknown keys`);
    for (const [name, child] of Object.entries(properties)) {
      if (typeof child.description !== "string") found.push(`${path}/${name} has no description`);
      looseNodes(child, `${path}/${name}`, found);
    }
  }
  if (typeof node.items === "object") looseNodes(node.items as JsonNode, `${path}[]`, found);
  for (const branch of (node.anyOf as JsonNode[] | undefined) ?? []) looseNodes(branch, path, found);
  return found;
}

describe("the chart's values schema", () => {
  it("is committed as generated (run `npm run crds -w operator` after changing it or a runbook)", () => {
    const files = chartFiles(repoRoot);
    expect(files.has(`${chartDir}/values.schema.json`)).toBe(true);
    for (const [relativePath, content] of files) {
      expect(readFileSync(join(repoRoot, relativePath), "utf8"), relativePath).toBe(content);
    }
    expect(staleChartRunbooks(repoRoot, files)).toEqual([]);
  });

  it("refuses unknown keys at every object level and describes every key", () => {
    expect(looseNodes(valuesJsonSchema(), "", [])).toEqual([]);
  });

  it("accepts values.yaml, and every ci/ values file over it", () => {
    expect(issuesOf(defaults)).toEqual([]);
    const ciFiles = readdirSync(join(chart, "ci")).filter((name) => name.endsWith(".yaml"));
    expect(ciFiles.length).toBeGreaterThan(0);
    for (const file of ciFiles) {
      const values = overlay(defaults, load(readFileSync(join(chart, "ci", file), "utf8")));
      expect(issuesOf(values), file).toEqual([]);
    }
  });

  it.each([
    ["replicaCount", "abc", /expected number/],
    ["replicaCount", 1.5, /expected int/],
    ["image.tag", "v1 beta", /image tag/],
    ["image.pullPolicy", "Sometimes", /Always.*IfNotPresent.*Never/],
    ["operandImages.ollama", "ollama/ollama", /pinned by a tag or digest/],
    ["applianceNamespaces", ["Remram"], /namespace name/],
    ["applianceNamespaces", ["remram", "remram"], /repeat/],
    ["applianceNamespaces", [], /too small|>=1/],
    ["probePort", 70_000, /<=65535/],
    ["resyncSeconds", 5, />=10/],
    ["consistencyCheckSeconds", 30, />=60/],
    ["logLevel", "verbose", /"info"/],
    ["resources.requests.memory", "lots", /Kubernetes quantity/],
    ["metrics.serviceMonitor.interval", "30 seconds", /Prometheus duration/],
    ["metrics.prometheusRule.runbookBaseUrl", "docs.example/runbooks", /http\(s\) URL/],
    ["metrics.dashboards.labelValue", "not a label value!", /label value/],
    ["tests.image.pullPolicy", "Sometimes", /"IfNotPresent"/],
  ])("refuses %s = %j with its path and why", (path, value, message) => {
    const [issue, ...others] = issuesOf(withValue(path, value));
    expect(others).toEqual([]);
    expect(issue?.path.join(".")).toMatch(new RegExp(`^${path.replaceAll(".", "\\.")}(\\.|$)`));
    expect(issue?.message).toMatch(message);
  });

  it("names an unknown key, also in a nested object", () => {
    expect(issuesOf(overlay(defaults, { unknownKey: 1 }))).toMatchObject([
      { code: "unrecognized_keys", keys: ["unknownKey"], path: [] },
    ]);
    expect(issuesOf(withValue("metrics.serviceMonitor.intervall", "1m"))).toMatchObject([
      { code: "unrecognized_keys", keys: ["intervall"], path: ["metrics", "serviceMonitor"] },
    ]);
  });

  it("keeps the operator's own bounds for what the chart passes to it", () => {
    const schema = valuesJsonSchema().properties as Record<string, JsonNode>;
    const settingsWith = (name: string, value: unknown) => () => loadSettings({ [name]: String(value) });
    for (const [key, variable] of [
      ["resyncSeconds", "REMRAM_RESYNC_SECONDS"],
      ["consistencyCheckSeconds", "REMRAM_CONSISTENCY_CHECK_SECONDS"],
      ["probePort", "REMRAM_PROBE_PORT"],
    ] as const) {
      const { minimum, maximum } = schema[key] as { minimum: number; maximum: number };
      expect(settingsWith(variable, minimum), `${key} minimum`).not.toThrow();
      expect(settingsWith(variable, maximum), `${key} maximum`).not.toThrow();
    }
    expect(settingsWith("REMRAM_RESYNC_SECONDS", (schema.resyncSeconds?.minimum as number) - 1)).toThrow();
    for (const level of (schema.logLevel as { enum: string[] }).enum) {
      expect(settingsWith("LOG_LEVEL", level), level).not.toThrow();
    }
  });
});
