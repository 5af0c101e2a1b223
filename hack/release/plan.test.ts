import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { platforms } from "../../kubectl-remram/src/krew.js";
import { cacheDir } from "../../test/harness/src/paths.js";
import {
  checkWorkspaceVersions,
  githubOutput,
  imagePrefix,
  parseTag,
  pluginMatrix,
  readVersionsEnv,
  releaseImages,
  repoRoot,
  versionedWorkspaces,
} from "./plan.js";

const scratch = mkdtempSync(join(tmpdir(), "release-plan-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A repository with only what the plan reads: hack/versions.env and each versioned workspace's package.json. */
function fakeRepo(name: string, versions: Record<string, string>): string {
  const root = join(scratch, name);
  mkdirSync(join(root, "hack"), { recursive: true });
  writeFileSync(
    join(root, "hack", "versions.env"),
    "# pinned\nOPENCLAW_VERSION=2030.1.2\n\nNODE_VERSION=24.0.0\r\nEMBED_ONNX_NAME=minilm-q\n",
  );
  for (const workspace of versionedWorkspaces) {
    mkdirSync(join(root, workspace), { recursive: true });
    const version = versions[workspace] ?? "1.2.3";
    writeFileSync(join(root, workspace, "package.json"), JSON.stringify({ name: workspace, version }));
  }
  return root;
}

describe("the release tag", () => {
  it("gives the version, and a pre-release for a tag with a pre-release part", () => {
    expect(parseTag("v1.2.3")).toEqual({
      tag: "v1.2.3",
      version: "1.2.3",
      prerelease: false,
      npmTag: "latest",
    });
    expect(parseTag("refs/tags/v0.10.0-rc.1")).toEqual({
      tag: "v0.10.0-rc.1",
      version: "0.10.0-rc.1",
      prerelease: true,
      npmTag: "next",
    });
  });

  it.each(["1.2.3", "v1.2", "v1.2.3.4", "v01.2.3", "v1.2.3+build.5", "v1.2.3-", "v1.2.3-rc..1", "main"])(
    "refuses %s",
    (tag) => {
      expect(() => parseTag(tag)).toThrow(/not a release tag/);
    },
  );

  it("must match every versioned workspace, and says which do not and how to bump them", () => {
    expect(() => checkWorkspaceVersions("1.2.3", fakeRepo("same", {}))).not.toThrow();
    const root = fakeRepo("behind", { cortex: "1.2.2", "kubectl-remram": "1.0.0" });
    expect(() => checkWorkspaceVersions("1.2.3", root)).toThrow(
      "the tag says 1.2.3 but cortex/package.json has 1.2.2, kubectl-remram/package.json has 1.0.0: bump them (npm version 1.2.3 -w cortex -w kubectl-remram), commit, tag again",
    );
  });

  it("holds for this checkout's own version", () => {
    const version = (
      JSON.parse(readFileSync(join(repoRoot, "kubectl-remram", "package.json"), "utf8")) as {
        version: string;
      }
    ).version;
    expect(() => checkWorkspaceVersions(version)).not.toThrow();
  });
});

describe("the released images", () => {
  it("are Remram's four at the release's version and the gateway at OpenClaw's", () => {
    const root = fakeRepo("images", {});
    expect(readVersionsEnv(root)).toEqual({
      OPENCLAW_VERSION: "2030.1.2",
      NODE_VERSION: "24.0.0",
      EMBED_ONNX_NAME: "minilm-q",
    });
    expect(releaseImages("1.2.3", root)).toEqual([
      {
        name: "operator",
        dockerfile: "operator/Dockerfile",
        tag: "1.2.3",
        buildArgs: ["VERSION=1.2.3"],
        chartValue: "image.repository",
        fetched: {},
      },
      {
        name: "cortex",
        dockerfile: "cortex/Dockerfile",
        tag: "1.2.3",
        buildArgs: ["VERSION=1.2.3"],
        chartValue: "operandImages.cortex",
        fetched: { "cortex/embedding-model": join(cacheDir, "embedding-onnx", "minilm-q") },
      },
      {
        name: "app",
        dockerfile: "app/Dockerfile",
        tag: "1.2.3",
        buildArgs: ["VERSION=1.2.3"],
        chartValue: "operandImages.app",
        fetched: {},
      },
      {
        name: "hooks",
        dockerfile: "hooks/Dockerfile",
        tag: "1.2.3",
        buildArgs: ["VERSION=1.2.3"],
        chartValue: "operandImages.hooks",
        fetched: {},
      },
      {
        name: "openclaw-gateway",
        dockerfile: "hack/gateway/Dockerfile",
        tag: "2030.1.2",
        buildArgs: ["OPENCLAW_VERSION=2030.1.2"],
        chartValue: "operandImages.gateway",
        fetched: {},
      },
    ]);
  });

  it("are built from the Dockerfiles the test bed builds, each declaring the build argument it is given", () => {
    const testbed = readFileSync(join(repoRoot, "hack", "install-images.sh"), "utf8");
    for (const image of releaseImages("1.2.3")) {
      const inScript = image.dockerfile.startsWith("hack/")
        ? `$HACK_DIR/${image.dockerfile.slice("hack/".length)}`
        : `$REPO_ROOT/${image.dockerfile}`;
      expect(testbed, image.dockerfile).toContain(`"${inScript}"`);
      expect(testbed).toContain(`localhost/remram/${image.name}:`);
      const dockerfile = readFileSync(join(repoRoot, image.dockerfile), "utf8");
      for (const argument of image.buildArgs)
        expect(dockerfile).toMatch(new RegExp(`^ARG ${argument.split("=")[0]}\\b`, "m"));
      // The published base is the default: a release never passes BASE.
      expect(dockerfile).toMatch(/^ARG BASE=\S+$/m);
    }
  });

  it("leave out the test bed's OpenSearch and Ollama stand-ins, which the chart takes from upstream", () => {
    const names = releaseImages("1.2.3").map((image) => image.name);
    expect(names).not.toContain("opensearch");
    expect(names).not.toContain("ollama");
    const values = readFileSync(join(repoRoot, "charts", "remram-operator", "values.yaml"), "utf8");
    expect(values).toMatch(/^ {2}opensearch: opensearchproject\/opensearch:/m);
    expect(values).toMatch(/^ {2}ollama: ollama\/ollama:/m);
  });

  it("go under a checked IMAGE_REGISTRY/IMAGE_NAMESPACE", () => {
    expect(imagePrefix(" registry.example.test:5000/ ", "/remram-project/images/")).toBe(
      "registry.example.test:5000/remram-project/images",
    );
    expect(() => imagePrefix("", "remram")).toThrow(/IMAGE_REGISTRY "" is not a registry/);
    expect(() => imagePrefix("https://registry.example.test", "remram")).toThrow(/IMAGE_REGISTRY/);
    expect(() => imagePrefix("registry.example.test", "Remram")).toThrow(/IMAGE_NAMESPACE "Remram"/);
    expect(() => imagePrefix("registry.example.test", "")).toThrow(/IMAGE_NAMESPACE/);
  });
});

describe("the plugin's build matrix", () => {
  it("has one runner for each platform the krew manifest lists, on that platform's OS and CPU", () => {
    const matrix = pluginMatrix();
    expect(matrix.map((entry) => entry.platform)).toEqual([...platforms]);
    for (const entry of matrix) {
      expect(`${entry.os}/${entry.arch}`).toBe(entry.platform);
      const os = { linux: /^ubuntu-/, darwin: /^macos-/, windows: /^windows-/ }[entry.os];
      expect(entry.runner).toMatch(os ?? /^$/);
      // GitHub's labels: an -arm suffix on Linux, -intel on macOS (plain macos-N is arm64), none on Windows x64.
      const arm =
        entry.runner.endsWith("-arm") || (entry.os === "darwin" && !entry.runner.endsWith("-intel"));
      expect(arm, entry.runner).toBe(entry.arch === "arm64");
    }
  });
});

describe("the workflow's outputs", () => {
  it("are key=value lines, and a value with a line break is refused", () => {
    expect(githubOutput({ version: "1.2.3", images: '[{"a":"x\\ny"}]' })).toBe(
      'version=1.2.3\nimages=[{"a":"x\\ny"}]\n',
    );
    expect(() => githubOutput({ bad: "a\nb" })).toThrow("the output bad has a line break");
  });
});
