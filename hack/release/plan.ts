/**
 * What a release of a tag `vX.Y.Z` is made of, decided from the repository alone: the version and whether it is a
 * pre-release, the images (the same Dockerfiles the test bed builds, see docs/testbed-images.md) and their tags, and
 * the runner each platform of the kubectl plugin is built on. Pure but for reading files; the release workflow
 * (.github/workflows/release.yml) takes its build matrices from here (`tsx hack/release/cli.ts plan`).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Platform, platforms } from "../../kubectl-remram/src/krew.js";
import { cacheDir } from "../../test/harness/src/paths.js";

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/** hack/versions.env as KEY → value (comments and blank lines skipped). */
export function readVersionsEnv(root = repoRoot): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const line of readFileSync(join(root, "hack", "versions.env"), "utf8").split("\n")) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match?.[1] !== undefined && match[2] !== undefined) entries[match[1]] = match[2];
  }
  return entries;
}

export function versionsEnv(key: string, root = repoRoot): string {
  const value = readVersionsEnv(root)[key];
  if (value === undefined || value === "") throw new Error(`hack/versions.env has no ${key}`);
  return value;
}

export interface ReleaseVersion {
  tag: string;
  /** The tag without its `v`: what every artifact of the release is versioned as. */
  version: string;
  /** A tag with a pre-release part (v1.2.0-rc.1): a GitHub pre-release, npm dist-tag `next`. */
  prerelease: boolean;
  npmTag: "latest" | "next";
}

/** Semantic versioning as npm, Helm and krew all accept it (no build metadata: `+` is not valid in an image tag). */
const tagPattern = /^v((0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?)$/;

/** The release's version from its tag (`v1.2.3`, also as `refs/tags/v1.2.3`). */
export function parseTag(ref: string): ReleaseVersion {
  const tag = ref.replace(/^refs\/tags\//, "");
  const match = tagPattern.exec(tag);
  if (match?.[1] === undefined)
    throw new Error(`the tag ${JSON.stringify(tag)} is not a release tag: vMAJOR.MINOR.PATCH[-PRERELEASE]`);
  const prerelease = match[5] !== undefined;
  return { tag, version: match[1], prerelease, npmTag: prerelease ? "next" : "latest" };
}

/** The workspaces whose package.json version is built into what the release ships. */
export const versionedWorkspaces = ["operator", "cortex", "hooks", "kubectl-remram"] as const;

/**
 * Refuse a tag that does not match the packages: the operator and Cortex report their package version, the npm
 * package is published under kubectl-remram's, and the krew manifest's URLs are made from it.
 */
export function checkWorkspaceVersions(version: string, root = repoRoot): void {
  const wrong = versionedWorkspaces
    .map((workspace) => {
      const manifest = JSON.parse(readFileSync(join(root, workspace, "package.json"), "utf8")) as {
        version?: string;
      };
      return { workspace, found: manifest.version };
    })
    .filter((entry) => entry.found !== version);
  if (wrong.length > 0) {
    const list = wrong.map((entry) => `${entry.workspace}/package.json has ${entry.found}`).join(", ");
    throw new Error(
      `the tag says ${version} but ${list}: bump them (npm version ${version} -w ${wrong.map((entry) => entry.workspace).join(" -w ")}), commit, tag again`,
    );
  }
}

export interface ReleaseImage {
  /** The image's name under IMAGE_REGISTRY/IMAGE_NAMESPACE, as the test bed names it (localhost/remram/NAME). */
  name: string;
  /** Relative to the repository root; the build context is staged from its COPY lines (context.ts). */
  dockerfile: string;
  tag: string;
  buildArgs: string[];
  /** The chart value that points the operator at it (the operator's own image is image.repository + appVersion). */
  chartValue: string;
  /**
   * Context paths the checkout does not hold, each with the folder `make setup` fetched it into (as
   * hack/install-images.sh puts them into the test bed's contexts).
   */
  fetched: Record<string, string>;
}

/**
 * The images a release publishes: the operator, Cortex, the hooks plugin and the OpenClaw gateway. The test bed's
 * OpenSearch and Ollama images are stand-ins for the upstream images the chart deploys (docs/testbed-images.md):
 * they are built from this machine's OpenSearch tree and a CPU-only Ollama, and are never published.
 */
export function releaseImages(version: string, root = repoRoot): ReleaseImage[] {
  const openclaw = versionsEnv("OPENCLAW_VERSION", root);
  const own = (name: string, chartValue: string, fetched: Record<string, string> = {}): ReleaseImage => ({
    name,
    dockerfile: `${name}/Dockerfile`,
    tag: version,
    buildArgs: [`VERSION=${version}`],
    chartValue,
    fetched,
  });
  // Cortex's in-process embedding model (hack/install-embedding-onnx.sh).
  const embeddingModel = join(cacheDir, "embedding-onnx", versionsEnv("EMBED_ONNX_NAME", root));
  return [
    own("operator", "image.repository"),
    own("cortex", "operandImages.cortex", { "cortex/embedding-model": embeddingModel }),
    own("app", "operandImages.app"),
    own("hooks", "operandImages.hooks"),
    {
      name: "openclaw-gateway",
      dockerfile: "hack/gateway/Dockerfile",
      // The gateway is OpenClaw's release, not Remram's: tagged with OpenClaw's version, as in the test bed.
      tag: openclaw,
      buildArgs: [`OPENCLAW_VERSION=${openclaw}`],
      chartValue: "operandImages.gateway",
      fetched: {},
    },
  ];
}

/** IMAGE_REGISTRY/IMAGE_NAMESPACE, checked: the workflow's variables must name a registry and a path in it. */
export function imagePrefix(registry: string, namespace: string): string {
  const host = registry.trim().replace(/\/+$/, "");
  const path = namespace.trim().replace(/^\/+|\/+$/g, "");
  if (!/^[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?(?::[0-9]+)?$/.test(host))
    throw new Error(`IMAGE_REGISTRY ${JSON.stringify(registry)} is not a registry host[:port]`);
  if (!/^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/.test(path))
    throw new Error(`IMAGE_NAMESPACE ${JSON.stringify(namespace)} is not a lowercase repository path`);
  return `${host}/${path}`;
}

/** The runner each platform of the krew archive is built on: a Node single executable needs that platform's node. */
export const pluginRunners: Record<Platform, string> = {
  "linux/amd64": "ubuntu-24.04",
  "linux/arm64": "ubuntu-24.04-arm",
  "darwin/amd64": "macos-15-intel",
  "darwin/arm64": "macos-15",
  "windows/amd64": "windows-2025",
};

/** The plugin's build matrix; `os` and `arch` name its artifact (an artifact name cannot hold a `/`). */
export function pluginMatrix(): { platform: Platform; os: string; arch: string; runner: string }[] {
  return platforms.map((platform) => {
    const [os = "", arch = ""] = platform.split("/");
    return { platform, os, arch, runner: pluginRunners[platform] };
  });
}

/** `key=value` lines for $GITHUB_OUTPUT; a value with a line break would need a heredoc, so none may have one. */
export function githubOutput(entries: Record<string, string>): string {
  return Object.entries(entries)
    .map(([key, value]) => {
      if (/[\r\n]/.test(value)) throw new Error(`the output ${key} has a line break`);
      return `${key}=${value}\n`;
    })
    .join("");
}
