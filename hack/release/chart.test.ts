import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load } from "js-yaml";
import { describe, expect, it } from "vitest";
import {
  type ChartRelease,
  chartDir,
  chartOciUrl,
  parsePush,
  pushArgs,
  readDigests,
  releaseValues,
  setScalars,
  valueAt,
} from "./chart.js";
import { releaseImages } from "./plan.js";

const digest = (digit: string) => `sha256:${digit.repeat(64)}`;
const release: ChartRelease = {
  version: "1.2.3",
  imagePrefix: "registry.example.test/remram",
  images: releaseImages("1.2.3"),
  digests: { cortex: digest("c"), hooks: digest("d") },
  runbookBaseUrl: "https://code.example.test/remram/remram/blob/v1.2.3/docs/runbooks/",
};
const gatewayTag = releaseImages("1.2.3").find((image) => image.name === "openclaw-gateway")?.tag;

describe("the chart's release values", () => {
  it("point the operator and its operands at the released images, by digest where there is one", () => {
    expect(releaseValues(release)).toEqual({
      "metrics.prometheusRule.runbookBaseUrl":
        "https://code.example.test/remram/remram/blob/v1.2.3/docs/runbooks",
      "image.repository": "registry.example.test/remram/operator",
      "operandImages.cortex": `registry.example.test/remram/cortex:1.2.3@${digest("c")}`,
      "operandImages.app": "registry.example.test/remram/app:1.2.3",
      "operandImages.hooks": `registry.example.test/remram/hooks:1.2.3@${digest("d")}`,
      "operandImages.gateway": `registry.example.test/remram/openclaw-gateway:${gatewayTag}`,
    });
  });

  it("refuse a digest that is not one, a digest of an image not released, and a runbook URL not https", () => {
    expect(() => releaseValues({ ...release, digests: { cortex: "sha256:abc" } })).toThrow(
      'the digest of cortex, "sha256:abc", is not sha256:<64 hex digits>',
    );
    expect(() => releaseValues({ ...release, digests: { opensearch: digest("e") } })).toThrow(
      "digests for images the release does not build: opensearch",
    );
    expect(() => releaseValues({ ...release, runbookBaseUrl: "docs/runbooks" })).toThrow(/not an https URL/);
  });

  it("are written into values.yaml with every comment and every other line kept", () => {
    const original = readFileSync(join(chartDir, "values.yaml"), "utf8");
    const values = releaseValues(release);
    const edited = setScalars(original, values);
    const parsed = load(edited);
    for (const [path, value] of Object.entries(values)) expect(valueAt(parsed, path), path).toBe(value);
    const before = original.split("\n");
    const after = edited.split("\n");
    expect(after).toHaveLength(before.length);
    const changed = after.filter((line, index) => line !== before[index]);
    expect(changed).toEqual([
      '  repository: "registry.example.test/remram/operator"',
      `  cortex: "registry.example.test/remram/cortex:1.2.3@${digest("c")}"`,
      '  app: "registry.example.test/remram/app:1.2.3"',
      `  gateway: "registry.example.test/remram/openclaw-gateway:${gatewayTag}"`,
      `  hooks: "registry.example.test/remram/hooks:1.2.3@${digest("d")}"`,
      '    runbookBaseUrl: "https://code.example.test/remram/remram/blob/v1.2.3/docs/runbooks"',
    ]);
    // Everything else parses as before: the edit touched nothing but the six values.
    const untouched = load(original) as Record<string, unknown>;
    for (const path of Object.keys(values)) {
      const keys = path.split(".");
      const parent = valueAt(untouched, keys.slice(0, -1).join(".")) as Record<string, unknown> | undefined;
      if (parent) parent[keys.at(-1) ?? ""] = values[path];
    }
    expect(parsed).toEqual(untouched);
  });

  it("edit by path: a same-named key elsewhere is left alone, a trailing comment stays", () => {
    const yaml = [
      "image:",
      "  repository: a/b # the image",
      "  tag: ''",
      "tests:",
      "  image:",
      "    repository: ''",
      "list:",
      "  - repository: x",
      "",
    ].join("\n");
    expect(setScalars(yaml, { "image.repository": "r/o" })).toBe(
      yaml.replace("  repository: a/b # the image", '  repository: "r/o" # the image'),
    );
    expect(setScalars(yaml, { "tests.image.repository": "t" })).toContain('    repository: "t"');
  });

  it("refuse a path values.yaml lacks, and a value that is a mapping or a list", () => {
    const yaml = "a:\n  b: 1\n  c:\n    - x\n  d: { e: 1 }\n";
    expect(() => setScalars(yaml, { "a.x": "1", "b.a": "2" })).toThrow("values.yaml has no a.x, b.a");
    expect(() => setScalars(yaml, { "a.c": "1" })).toThrow(/a.c is not a plain scalar/);
    expect(() => setScalars(yaml, { "a.d": "1" })).toThrow(/a.d is not a plain scalar/);
  });
});

describe("the chart's push", () => {
  it("goes to CHART_REGISTRY/CHART_NAMESPACE as an OCI artifact", () => {
    expect(chartOciUrl("registry.example.test/", "/remram/charts/")).toBe(
      "oci://registry.example.test/remram/charts",
    );
    expect(chartOciUrl("oci://registry.example.test", "remram/charts")).toBe(
      "oci://registry.example.test/remram/charts",
    );
    expect(() => chartOciUrl("registry.example.test", "")).toThrow('CHART_NAMESPACE "" is not a lowercase');
    expect(() => chartOciUrl("", "remram/charts")).toThrow('CHART_REGISTRY "" is not a registry host');
    expect(() => chartOciUrl("https://registry.example.test", "remram")).toThrow(/CHART_REGISTRY/);
    expect(pushArgs("/out/remram-operator-1.2.3.tgz", "oci://registry.example.test/remram/charts")).toEqual([
      "push",
      "/out/remram-operator-1.2.3.tgz",
      "oci://registry.example.test/remram/charts",
    ]);
    expect(pushArgs("/c.tgz", "oci://127.0.0.1:5000/c", true)).toEqual([
      "push",
      "/c.tgz",
      "oci://127.0.0.1:5000/c",
      "--plain-http",
    ]);
  });

  it("reports the reference and digest that cosign signs", () => {
    const said = `Pushed: registry.example.test/remram/charts/remram-operator:1.2.3\nDigest: ${digest("a")}\n`;
    expect(parsePush(said)).toEqual({
      ref: "registry.example.test/remram/charts/remram-operator:1.2.3",
      digest: digest("a"),
    });
    expect(() => parsePush("Error: unauthorized")).toThrow("helm push said: Error: unauthorized");
  });

  it("takes the images' digests from the files the image jobs leave", () => {
    const dir = mkdtempSync(join(tmpdir(), "release-digests-"));
    try {
      writeFileSync(join(dir, "hooks"), `${digest("d")}\n`);
      writeFileSync(join(dir, "cortex"), digest("c"));
      expect(readDigests(dir)).toEqual({ cortex: digest("c"), hooks: digest("d") });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
