/**
 * The chart as a release publishes it: a copy of charts/remram-operator whose values.yaml points the operator and its
 * operands at the released images (pinned by digest where the image build reported one) and each alert's
 * runbook_url at the tagged docs/runbooks, packaged with `helm package --version --app-version` of the tag, then
 * pushed as an OCI artifact (`helm push … oci://…`). values.yaml is edited line by line, so its comments (what
 * `helm show values` prints) stay; the result is parsed back and checked.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import { load } from "js-yaml";
import { type ReleaseImage, repoRoot } from "./plan.js";

const run = promisify(execFile);

export const chartName = "remram-operator";
export const chartDir = join(repoRoot, "charts", chartName);

const digestPattern = /^sha256:[0-9a-f]{64}$/;

export interface ChartRelease {
  version: string;
  /** IMAGE_REGISTRY/IMAGE_NAMESPACE. */
  imagePrefix: string;
  images: readonly ReleaseImage[];
  /** Image name → the digest its build pushed (sha256:…); images without one are referenced by tag only. */
  digests: Readonly<Record<string, string>>;
  /** Where the tagged docs/runbooks are read: each alert's runbook_url is <this>/<AlertName>.md. */
  runbookBaseUrl: string;
}

/** Image name → digest, from a folder of files named after the image, each holding `sha256:…`. */
export function readDigests(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((name) => [name, readFileSync(join(dir, name), "utf8").trim()]),
  );
}

/** The values.yaml entries a release sets, by dotted path. */
export function releaseValues(release: ChartRelease): Record<string, string> {
  if (!/^https:\/\/\S+$/.test(release.runbookBaseUrl))
    throw new Error(`the runbook base URL ${JSON.stringify(release.runbookBaseUrl)} is not an https URL`);
  const values: Record<string, string> = {
    "metrics.prometheusRule.runbookBaseUrl": release.runbookBaseUrl.replace(/\/+$/, ""),
  };
  for (const image of release.images) {
    const repository = `${release.imagePrefix}/${image.name}`;
    const digest = release.digests[image.name];
    if (digest !== undefined && !digestPattern.test(digest))
      throw new Error(
        `the digest of ${image.name}, ${JSON.stringify(digest)}, is not sha256:<64 hex digits>`,
      );
    // The chart's image.tag takes no digest: the operator is pulled by repository and appVersion (the tag).
    values[image.chartValue] =
      image.chartValue === "image.repository"
        ? repository
        : `${repository}:${image.tag}${digest === undefined ? "" : `@${digest}`}`;
  }
  const unknown = Object.keys(release.digests).filter(
    (name) => !release.images.some((image) => image.name === name),
  );
  if (unknown.length > 0)
    throw new Error(`digests for images the release does not build: ${unknown.join(", ")}`);
  return values;
}

const keyLine = /^(\s*)([A-Za-z0-9_-]+):(?:\s+(.*))?$/;

/** The scalar part of a `key: value  # comment` line's value, and what follows it. */
function splitComment(value: string): { scalar: string; rest: string } {
  const match = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^#]*?)(\s+#.*)?$/.exec(value);
  return { scalar: match?.[1] ?? value, rest: match?.[2] ?? "" };
}

/**
 * Set scalar values in a YAML document by dotted path, keeping every other line (comments, order, style) as it
 * was. Only block mappings are followed (no lists, no flow mappings on the way); a path not found is an error.
 */
export function setScalars(yaml: string, values: Readonly<Record<string, string>>): string {
  const lines = yaml.split("\n");
  const stack: { indent: number; key: string }[] = [];
  const found = new Set<string>();
  for (const [index, line] of lines.entries()) {
    const match = keyLine.exec(line);
    if (match === null || match[1] === undefined || match[2] === undefined) continue;
    const indent = match[1].length;
    while (stack.length > 0 && (stack.at(-1)?.indent ?? -1) >= indent) stack.pop();
    const path = [...stack.map((entry) => entry.key), match[2]].join(".");
    const value = match[3] ?? "";
    const newValue = values[path];
    if (newValue !== undefined) {
      const { scalar, rest } = splitComment(value);
      if (scalar === "" || /^[[{|>&*!]/.test(scalar))
        throw new Error(`values.yaml: ${path} is not a plain scalar (${JSON.stringify(value)})`);
      lines[index] = `${match[1]}${match[2]}: ${JSON.stringify(newValue)}${rest}`;
      found.add(path);
    }
    if (splitComment(value).scalar === "") stack.push({ indent, key: match[2] });
  }
  const missing = Object.keys(values).filter((path) => !found.has(path));
  if (missing.length > 0) throw new Error(`values.yaml has no ${missing.join(", ")}`);
  return lines.join("\n");
}

/** The value at a dotted path of a parsed document. */
export function valueAt(document: unknown, path: string): unknown {
  return path
    .split(".")
    .reduce<unknown>(
      (node, key) =>
        node !== null && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined,
      document,
    );
}

export interface PackagedChart {
  /** The .tgz `helm package` wrote. */
  path: string;
  /** The values.yaml it carries. */
  values: Record<string, string>;
}

/**
 * A copy of the chart with the release's values, linted (values.schema.json checks every image reference) and
 * packaged into `out` with the release's version as both version and appVersion.
 */
export async function packageChart(
  release: ChartRelease,
  out: string,
  helm = "helm",
  source = chartDir,
): Promise<PackagedChart> {
  const values = releaseValues(release);
  const scratch = mkdtempSync(join(tmpdir(), "remram-chart-"));
  try {
    const copy = join(scratch, chartName);
    cpSync(source, copy, { recursive: true });
    const valuesFile = join(copy, "values.yaml");
    const edited = setScalars(readFileSync(valuesFile, "utf8"), values);
    const parsed = load(edited);
    for (const [path, value] of Object.entries(values)) {
      if (valueAt(parsed, path) !== value)
        throw new Error(`values.yaml: ${path} reads back as ${JSON.stringify(valueAt(parsed, path))}`);
    }
    writeFileSync(valuesFile, edited);
    await helmRun(helm, ["lint", "--strict", copy]);
    mkdirSync(out, { recursive: true });
    const { stdout } = await helmRun(helm, [
      "package",
      copy,
      "--version",
      release.version,
      "--app-version",
      release.version,
      "--destination",
      out,
    ]);
    const path = /saved it to: (\S+\.tgz)/.exec(stdout)?.[1];
    if (path === undefined || basename(path) !== `${chartName}-${release.version}.tgz`)
      throw new Error(`helm package said: ${stdout}`);
    return { path, values };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function helmRun(helm: string, args: string[]): Promise<{ stdout: string }> {
  try {
    return await run(helm, args, { maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`helm ${args[0]} failed: ${failed.stderr || failed.stdout || failed.message}`);
  }
}

/** CHART_REGISTRY/CHART_NAMESPACE as `helm push` takes it. */
export function chartOciUrl(registry: string, namespace: string): string {
  const host = registry
    .trim()
    .replace(/^oci:\/\//, "")
    .replace(/\/+$/, "");
  const path = namespace.trim().replace(/^\/+|\/+$/g, "");
  if (!/^[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?(?::[0-9]+)?$/.test(host))
    throw new Error(`CHART_REGISTRY ${JSON.stringify(registry)} is not a registry host[:port]`);
  if (!/^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/.test(path))
    throw new Error(`CHART_NAMESPACE ${JSON.stringify(namespace)} is not a lowercase repository path`);
  return `oci://${host}/${path}`;
}

/** `helm push`'s arguments; plain HTTP only for a registry on this machine (the tests push to one). */
export const pushArgs = (packaged: string, ociUrl: string, plainHttp = false): string[] => [
  "push",
  packaged,
  ociUrl,
  ...(plainHttp ? ["--plain-http"] : []),
];

/** The reference and digest `helm push` reports ("Pushed: …" and "Digest: sha256:…"). */
export function parsePush(output: string): { ref: string; digest: string } {
  const ref = /^Pushed:\s+(\S+)$/m.exec(output)?.[1];
  const digest = /^Digest:\s+(sha256:[0-9a-f]{64})$/m.exec(output)?.[1];
  if (ref === undefined || digest === undefined) throw new Error(`helm push said: ${output}`);
  return { ref, digest };
}

/** `helm push`; returns what it pushed, for cosign to sign by digest. */
export async function pushChart(
  packaged: string,
  ociUrl: string,
  helm = "helm",
  plainHttp = false,
): Promise<{ ref: string; digest: string }> {
  const { stdout, stderr } = await run(helm, pushArgs(packaged, ociUrl, plainHttp), {
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`helm push failed: ${error.stderr || error.message}`);
  });
  return parsePush(`${stdout}\n${stderr}`);
}
