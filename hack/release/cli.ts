/**
 * The release workflow's steps that are more than one command (.github/workflows/release.yml), runnable here:
 *   tsx hack/release/cli.ts plan --tag vX.Y.Z [--image-registry HOST --image-namespace PATH]
             [--chart-registry HOST --chart-namespace PATH]
 *   tsx hack/release/cli.ts context --image NAME --out DIR
 *   tsx hack/release/cli.ts chart --tag vX.Y.Z --image-registry HOST --image-namespace PATH
 *         --chart-registry HOST --chart-namespace PATH --runbook-base-url URL --out DIR [--digests DIR] [--push]
 *         [--helm PATH]
 *   tsx hack/release/cli.ts archive --platform OS/ARCH --out DIR
 *   tsx hack/release/cli.ts plugin --archives DIR --base-url URL --out DIR
 * Each prints what it did as JSON; with $GITHUB_OUTPUT set it also appends its outputs there. Nothing here pushes
 * unless asked to (`chart --push`), and nothing here logs in anywhere: the workflow does that first.
 */
import { appendFileSync, existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { packageVersion } from "../../kubectl-remram/src/bundle.js";
import { seaArchive } from "../../kubectl-remram/src/release.js";
import { hostPlatform } from "../../kubectl-remram/src/sea.js";
import { chartOciUrl, packageChart, pushArgs, pushChart, readDigests } from "./chart.js";
import { stageContext } from "./context.js";
import {
  checkWorkspaceVersions,
  githubOutput,
  imagePrefix,
  parseTag,
  pluginMatrix,
  releaseImages,
  repoRoot,
} from "./plan.js";
import { assemblePlugin } from "./plugin.js";

const usage = `usage: tsx hack/release/cli.ts plan --tag vX.Y.Z [--image-registry HOST --image-namespace PATH]
             [--chart-registry HOST --chart-namespace PATH]
       tsx hack/release/cli.ts context --image NAME --out DIR
       tsx hack/release/cli.ts chart --tag vX.Y.Z --image-registry HOST --image-namespace PATH
             --chart-registry HOST --chart-namespace PATH --runbook-base-url URL --out DIR
             [--digests DIR] [--push] [--helm PATH]
       tsx hack/release/cli.ts archive --platform OS/ARCH --out DIR
       tsx hack/release/cli.ts plugin --archives DIR --base-url URL --out DIR
`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    tag: { type: "string" },
    image: { type: "string" },
    out: { type: "string" },
    "image-registry": { type: "string" },
    "image-namespace": { type: "string" },
    "chart-registry": { type: "string" },
    "chart-namespace": { type: "string" },
    "runbook-base-url": { type: "string" },
    digests: { type: "string" },
    push: { type: "boolean", default: false },
    "plain-http": { type: "boolean", default: false },
    helm: { type: "string", default: "helm" },
    archives: { type: "string" },
    platform: { type: "string" },
    "base-url": { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});

function required(name: keyof typeof values): string {
  const value = values[name];
  if (typeof value !== "string" || value === "") throw new Error(`--${name} is required\n${usage}`);
  return value;
}

/** Print the result, and hand the outputs to the workflow when it runs this. */
function report(result: unknown, outputs: Record<string, string>): void {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  const file = process.env.GITHUB_OUTPUT;
  if (file) appendFileSync(file, githubOutput(outputs));
}

async function plan(): Promise<void> {
  const version = parseTag(required("tag"));
  checkWorkspaceVersions(version.version);
  const images = releaseImages(version.version);
  const matrix = pluginMatrix();
  // The registries come from the workflow's variables: checked here, before anything is built.
  // Given empty (a variable not set), they stop the release here.
  const prefix =
    values["image-registry"] === undefined
      ? undefined
      : imagePrefix(values["image-registry"], values["image-namespace"] ?? "");
  const charts =
    values["chart-registry"] === undefined
      ? undefined
      : chartOciUrl(values["chart-registry"], values["chart-namespace"] ?? "");
  report(
    { ...version, images, plugin: matrix, imagePrefix: prefix, chartRepository: charts },
    {
      tag: version.tag,
      version: version.version,
      prerelease: String(version.prerelease),
      "npm-tag": version.npmTag,
      images: JSON.stringify(
        images.map((image) => ({
          name: image.name,
          dockerfile: image.dockerfile,
          tag: image.tag,
          "build-args": image.buildArgs.join("\n"),
        })),
      ),
      plugin: JSON.stringify(matrix),
      ...(prefix ? { "image-prefix": prefix } : {}),
      ...(charts ? { "chart-repository": charts } : {}),
    },
  );
}

function context(): void {
  const name = required("image");
  const image = releaseImages(packageVersion()).find((each) => each.name === name);
  if (image === undefined) throw new Error(`no release image is called ${name}`);
  const out = resolve(required("out"));
  const files = stageContext(image.dockerfile, out, undefined, image.fetched);
  report({ image: name, dockerfile: image.dockerfile, context: out, files }, { context: out });
}

async function chart(): Promise<void> {
  const version = parseTag(required("tag"));
  const digests = values.digests ? readDigests(values.digests) : {};
  const packaged = await packageChart(
    {
      version: version.version,
      imagePrefix: imagePrefix(required("image-registry"), required("image-namespace")),
      images: releaseImages(version.version),
      digests,
      runbookBaseUrl: required("runbook-base-url"),
    },
    resolve(required("out")),
    values.helm,
  );
  const ociUrl = chartOciUrl(required("chart-registry"), required("chart-namespace"));
  const pushed = values.push
    ? await pushChart(packaged.path, ociUrl, values.helm, values["plain-http"])
    : undefined;
  report(
    {
      chart: packaged.path,
      values: packaged.values,
      push: ["helm", ...pushArgs(packaged.path, ociUrl, values["plain-http"])],
      ...(pushed ? { pushed } : {}),
    },
    { chart: packaged.path, ...(pushed ? { ref: pushed.ref, digest: pushed.digest } : {}) },
  );
}

/** This runner's krew archive only (the matrix job): no npm package, which each runner would build for nothing. */
async function archive(): Promise<void> {
  const platform = hostPlatform();
  const wanted = required("platform");
  if (platform !== wanted)
    throw new Error(
      `asked for ${wanted}, but this Node is ${process.platform}/${process.arch} (${platform ?? "no krew platform"})`,
    );
  const out = resolve(required("out"));
  mkdirSync(out, { recursive: true });
  const built = await seaArchive(platform, out);
  report(built, { archive: built.path, sha256: built.sha256 });
}

async function plugin(): Promise<void> {
  const assembled = await assemblePlugin({
    archives: resolve(required("archives")),
    baseUrl: required("base-url"),
    out: resolve(required("out")),
  });
  report(assembled, { tarball: assembled.tarball, manifest: assembled.manifest });
}

async function main(): Promise<void> {
  const [command] = positionals;
  if (values.help || command === undefined) {
    process.stdout.write(usage);
    return;
  }
  const commands: Record<string, () => void | Promise<void>> = { plan, context, chart, archive, plugin };
  const selected = commands[command];
  if (selected === undefined) throw new Error(`unknown command ${command}\n${usage}`);
  if (!existsSync(join(repoRoot, "hack", "versions.env")))
    throw new Error(`${repoRoot} is not the repository`);
  await selected();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
