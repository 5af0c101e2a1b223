// `tsx hack/release/cli.ts plan`, the release workflow's first step, as the workflow runs it. The other commands
// need Helm, a registry or the compiled packages: release.int.test.ts runs them.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { platforms } from "../../kubectl-remram/src/krew.js";
import { releaseImages, repoRoot } from "./plan.js";

const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), "release-cli-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const version = (
  JSON.parse(readFileSync(join(repoRoot, "kubectl-remram", "package.json"), "utf8")) as {
    version: string;
  }
).version;

async function cli(
  ...args: string[]
): Promise<{ code: number; stderr: string; outputs: Record<string, string> }> {
  const file = join(scratch, `output-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, "");
  const tsx = join(repoRoot, "node_modules", ".bin", "tsx");
  const result = await run(tsx, [join(repoRoot, "hack", "release", "cli.ts"), ...args], {
    cwd: repoRoot,
    env: { ...process.env, GITHUB_OUTPUT: file },
  }).then(
    ({ stderr }) => ({ code: 0, stderr }),
    (error: { code?: number; stderr?: string }) => ({ code: error.code ?? -1, stderr: error.stderr ?? "" }),
  );
  const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
  return { ...result, outputs: Object.fromEntries(lines.map((line) => line.split(/=(.*)/s).slice(0, 2))) };
}

describe("cli.ts plan", () => {
  it("hands the workflow the version, the matrices and the checked registries", async () => {
    const { code, stderr, outputs } = await cli(
      ...["plan", "--tag", `v${version}`, "--image-registry", "registry.example.test:5000"],
      ...["--image-namespace", "remram", "--chart-registry", "registry.example.test"],
      ...["--chart-namespace", "remram/charts"],
    );
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(outputs).toMatchObject({
      tag: `v${version}`,
      version,
      prerelease: String(version.includes("-")),
      "image-prefix": "registry.example.test:5000/remram",
      "chart-repository": "oci://registry.example.test/remram/charts",
    });
    const images = JSON.parse(outputs.images ?? "") as { name: string; "build-args": string }[];
    expect(images.map((image) => image.name)).toEqual(releaseImages(version).map((image) => image.name));
    expect(images[0]?.["build-args"]).toBe(`VERSION=${version}`);
    const plugin = JSON.parse(outputs.plugin ?? "") as { platform: string; runner: string }[];
    expect(plugin.map((entry) => entry.platform)).toEqual([...platforms]);
  });

  it("stops the release on a tag the packages do not carry, and on a registry variable that is not one", async () => {
    const wrongTag = await cli("plan", "--tag", "v99.0.0");
    expect(wrongTag.code).toBe(1);
    expect(wrongTag.stderr).toMatch(/^the tag says 99\.0\.0 but operator\/package\.json has /);
    expect(wrongTag.outputs).toEqual({});
    const badNamespace = await cli(
      ...["plan", "--tag", `v${version}`, "--image-registry", "registry.example.test"],
      ...["--image-namespace", "Not/Lowercase"],
    );
    expect(badNamespace.code).toBe(1);
    expect(badNamespace.stderr).toContain(
      'IMAGE_NAMESPACE "Not/Lowercase" is not a lowercase repository path',
    );
    const unset = await cli(
      ...[
        "plan",
        "--tag",
        `v${version}`,
        "--image-registry",
        "registry.example.test",
        "--image-namespace",
        "r",
      ],
      ...["--chart-registry", "", "--chart-namespace", "remram/charts"],
    );
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain('CHART_REGISTRY "" is not a registry host[:port]');
    const unknown = await cli("publish");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^unknown command publish\nusage:/);
  });
});
