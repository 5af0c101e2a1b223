// The release workflow's steps, run here as the workflow runs them (tsx hack/release/cli.ts …, $GITHUB_OUTPUT set):
// the chart packaged by the real Helm and pushed to a real OCI registry on this machine (the CNCF distribution the
// test bed builds; the workflow pushes to CHART_REGISTRY), every image's build context staged from this checkout's
// builds, this machine's krew archive built, and the plugin's release assets assembled from an archive per platform.
// Only what needs GitHub is faked: the other platforms' archives (each is built on its own OS there) and the
// registries' host names in the values.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { load, loadAll } from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { archiveName, archiveUri, krewPluginSchema, platforms } from "../../kubectl-remram/src/krew.js";
import { hostPlatform } from "../../kubectl-remram/src/sea.js";
import { binPath } from "../../test/harness/src/paths.js";
import { freePort } from "../../test/harness/src/ports.js";
import { httpReady, waitFor } from "../../test/harness/src/wait.js";
import { copySources } from "./context.js";
import { releaseImages, repoRoot } from "./plan.js";

const run = promisify(execFile);
const helm = binPath("helm");
const scratch = mkdtempSync(join(tmpdir(), "release-int-"));
const tsx = join(repoRoot, "node_modules", ".bin", "tsx");
const version = (
  JSON.parse(readFileSync(join(repoRoot, "kubectl-remram", "package.json"), "utf8")) as {
    version: string;
  }
).version;
const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

/** hack/release/cli.ts as the workflow runs it: its JSON report and the outputs it hands the workflow. */
async function cli(
  name: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ report: Record<string, unknown>; outputs: Record<string, string> }> {
  const outputFile = join(scratch, `${name}.output`);
  writeFileSync(outputFile, "");
  const { stdout } = await run(tsx, [join(repoRoot, "hack", "release", "cli.ts"), ...args], {
    cwd: repoRoot,
    env: { ...process.env, GITHUB_OUTPUT: outputFile, ...env },
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`cli.ts ${args[0]} failed: ${error.stderr || error.message}`);
  });
  const outputs = Object.fromEntries(
    readFileSync(outputFile, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
  return { report: JSON.parse(stdout) as Record<string, unknown>, outputs };
}

describe("the chart, packaged and pushed", () => {
  let registry: ChildProcess | undefined;
  let port = 0;
  const tag = "v9.8.7-rc.1"; // the chart's version comes from the tag, whatever the checkout's Chart.yaml says
  const digests = Object.fromEntries(
    releaseImages("9.8.7-rc.1").map((image, index) => [image.name, `sha256:${String(index + 1).repeat(64)}`]),
  );
  const runbooks = "https://code.example.test/remram/remram/blob/v9.8.7-rc.1/docs/runbooks";
  let pushed: { outputs: Record<string, string>; report: Record<string, unknown> };

  beforeAll(async () => {
    expect(existsSync(helm), `${helm} is missing: run make setup`).toBe(true);
    port = await freePort();
    const config = join(scratch, "registry.json");
    writeFileSync(
      config,
      JSON.stringify({
        version: "0.1",
        log: { level: "error", accesslog: { disabled: true } },
        storage: { filesystem: { rootdirectory: join(scratch, "registry") } },
        http: { addr: `127.0.0.1:${port}` },
      }),
    );
    registry = spawn(binPath("registry"), ["serve", config], { stdio: "ignore" });
    await waitFor(() => httpReady(`http://127.0.0.1:${port}/v2/`), {
      what: "the local OCI registry",
      timeoutMs: 20_000,
      abortIf: () => (registry?.exitCode === null ? undefined : `exited with ${registry?.exitCode}`),
    });
    const digestDir = join(scratch, "digests");
    mkdirSync(digestDir, { recursive: true });
    for (const [name, digest] of Object.entries(digests)) writeFileSync(join(digestDir, name), `${digest}\n`);
    pushed = await cli("chart", [
      "chart",
      ...["--tag", tag, "--image-registry", "registry.example.test", "--image-namespace", "remram"],
      ...["--chart-registry", `127.0.0.1:${port}`, "--chart-namespace", "remram/charts"],
      ...["--runbook-base-url", runbooks, "--digests", digestDir, "--out", join(scratch, "chart")],
      ...["--push", "--plain-http", "--helm", helm],
    ]);
  }, 120_000);

  afterAll(() => {
    if (registry?.pid !== undefined && registry.exitCode === null) process.kill(registry.pid, "SIGTERM");
  });

  const packaged = () => join(scratch, "chart", "remram-operator-9.8.7-rc.1.tgz");

  it("carries the tag's version as version and appVersion", async () => {
    expect(pushed.outputs.chart).toBe(packaged());
    const { stdout } = await run(helm, ["show", "chart", packaged()]);
    const chart = load(stdout) as { name: string; version: string; appVersion: string };
    expect(chart).toMatchObject({ name: "remram-operator", version: "9.8.7-rc.1", appVersion: "9.8.7-rc.1" });
  });

  it("points the operator and its operands at the released images, its alerts at the tagged runbooks", async () => {
    const { stdout: values } = await run(helm, ["show", "values", packaged()]);
    expect(values).toContain("# The operator image (operator/Dockerfile)."); // the comments are kept
    const { stdout } = await run(helm, [
      ...["template", "remram", packaged(), "-n", "remram-system"],
      ...["--api-versions", "monitoring.coreos.com/v1"],
    ]);
    const objects = loadAll(stdout) as { kind: string; spec: Record<string, unknown> }[];
    const deployment = objects.find((object) => object?.kind === "Deployment") as unknown as {
      spec: {
        template: { spec: { containers: { image: string; env: { name: string; value: string }[] }[] } };
      };
    };
    const [operator] = deployment.spec.template.spec.containers;
    expect(operator?.image).toBe("registry.example.test/remram/operator:9.8.7-rc.1");
    const env = Object.fromEntries((operator?.env ?? []).map((each) => [each.name, each.value]));
    const gateway = releaseImages("9.8.7-rc.1").find((image) => image.name === "openclaw-gateway")?.tag;
    expect(env.REMRAM_IMAGE_CORTEX).toBe(`registry.example.test/remram/cortex:9.8.7-rc.1@${digests.cortex}`);
    expect(env.REMRAM_IMAGE_HOOKS).toBe(`registry.example.test/remram/hooks:9.8.7-rc.1@${digests.hooks}`);
    expect(env.REMRAM_IMAGE_GATEWAY).toBe(
      `registry.example.test/remram/openclaw-gateway:${gateway}@${digests["openclaw-gateway"]}`,
    );
    expect(env.REMRAM_IMAGE_OPENSEARCH).toMatch(/^opensearchproject\/opensearch:/); // upstream's, unchanged
    const rule = objects.find((object) => object?.kind === "PrometheusRule") as unknown as {
      spec: { groups: { rules: { alert?: string; annotations?: { runbook_url?: string } }[] }[] };
    };
    const alerts = rule.spec.groups.flatMap((group) => group.rules).filter((each) => each.alert);
    expect(alerts.length).toBeGreaterThan(5);
    for (const alert of alerts) {
      expect(alert.annotations?.runbook_url).toBe(`${runbooks}/${alert.alert}.md`);
      expect(existsSync(join(repoRoot, "docs", "runbooks", `${alert.alert}.md`)), alert.alert).toBe(true);
    }
  });

  it("is in the registry under the reference and digest handed to cosign, byte for byte", async () => {
    const ref = `127.0.0.1:${port}/remram/charts/remram-operator:9.8.7-rc.1`;
    expect(pushed.outputs.ref).toBe(ref);
    expect(pushed.outputs.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(pushed.report.push).toEqual([
      "helm",
      "push",
      packaged(),
      `oci://127.0.0.1:${port}/remram/charts`,
      "--plain-http",
    ]);
    const into = join(scratch, "pulled");
    mkdirSync(into, { recursive: true });
    const { stdout, stderr } = await run(helm, [
      ...["pull", `oci://127.0.0.1:${port}/remram/charts/remram-operator`, "--version", "9.8.7-rc.1"],
      ...["--plain-http", "--destination", into],
    ]);
    expect(`${stdout}${stderr}`).toContain(`Digest: ${pushed.outputs.digest}`);
    expect(sha256(join(into, "remram-operator-9.8.7-rc.1.tgz"))).toBe(sha256(packaged()));
  });
});

describe("the images' build contexts", () => {
  it.each(releaseImages(version).map((image) => [image.name, image.dockerfile]))(
    "%s: exactly the files %s copies, from this checkout and the cache",
    async (name, dockerfile) => {
      const out = join(scratch, "contexts", name);
      const { outputs, report } = await cli(`context-${name}`, ["context", "--image", name, "--out", out]);
      expect(outputs.context).toBe(out);
      const expected = copySources(readFileSync(join(repoRoot, dockerfile), "utf8"));
      expect(report.files).toEqual(expected);
      for (const path of expected) expect(existsSync(join(out, path)), path).toBe(true);
      expect(existsSync(join(out, "node_modules"))).toBe(false);
    },
  );
});

describe("the kubectl plugin's release assets", () => {
  const archives = join(scratch, "archives");
  const out = join(scratch, "assets");
  const baseUrl = "https://code.example.test/remram/remram/releases/download";
  let assembled: { outputs: Record<string, string>; report: Record<string, unknown> };

  const host = hostPlatform();
  let built: { outputs: Record<string, string>; report: Record<string, unknown> };

  beforeAll(async () => {
    expect(host, `${process.platform}/${process.arch} is no krew platform`).toBeDefined();
    // This machine's archive for real, as its matrix job builds it; stand-ins for the ones built on other OSes
    // (any file: what matters there is its name and sha256).
    const env = { KUBECTL_REMRAM_COMMIT: "0123456789ab" };
    built = await cli("archive", ["archive", "--platform", host ?? "", "--out", archives], env);
    for (const platform of platforms)
      if (platform !== host) writeFileSync(join(archives, archiveName(version, platform)), platform);
    assembled = await cli("plugin", ["plugin", "--archives", archives, "--base-url", baseUrl, "--out", out], {
      SOURCE_DATE_EPOCH: "1700000000",
      KUBECTL_REMRAM_COMMIT: "0123456789ab",
    });
  }, 180_000);

  it("has this machine's archive built by cli.ts archive, its executable answering with the version", async () => {
    const archive = join(archives, archiveName(version, host ?? "linux/amd64"));
    expect(built.outputs).toEqual({ archive, sha256: sha256(archive) });
    const unpacked = join(scratch, "unpacked");
    mkdirSync(unpacked, { recursive: true });
    await run("tar", ["-xzf", archive, "-C", unpacked]);
    const { stdout } = await run(join(unpacked, "kubectl-remram"), ["version", "--client"], { env: {} });
    expect(stdout).toContain(version);
    expect(stdout).toContain("0123456789ab");
    const other = platforms.find((platform) => platform !== host) ?? "windows/amd64";
    await expect(cli("wrong", ["archive", "--platform", other, "--out", archives])).rejects.toThrow(
      `asked for ${other}, but this Node is ${process.platform}/${process.arch}`,
    );
  });

  it("has a krew manifest krew installs: every platform, its release URL and sha256", () => {
    expect(assembled.outputs.manifest).toBe(join(out, "remram.yaml"));
    const manifest = krewPluginSchema({ placeholders: false }).parse(
      load(readFileSync(join(out, "remram.yaml"), "utf8")),
    );
    expect(manifest.spec.version).toBe(`v${version}`);
    expect(manifest.spec.platforms).toHaveLength(platforms.length);
    for (const [index, platform] of platforms.entries()) {
      const entry = manifest.spec.platforms[index];
      expect(entry?.uri).toBe(archiveUri(baseUrl, version, platform));
      expect(entry?.sha256).toBe(sha256(join(archives, archiveName(version, platform))));
    }
  });

  it("has every archive, an SBOM beside each, and the npm tarball", () => {
    const assets = assembled.report.assets as string[];
    expect(assembled.outputs.tarball).toBe(join(out, `remram-kubectl-remram-${version}.tgz`));
    expect(assets).toContain(assembled.outputs.tarball);
    const client = JSON.parse(
      readFileSync(join(repoRoot, "node_modules", "@kubernetes", "client-node", "package.json"), "utf8"),
    ) as { version: string };
    for (const platform of platforms) {
      const archive = join(out, archiveName(version, platform));
      expect(assets).toContain(archive);
      expect(sha256(archive)).toBe(sha256(join(archives, archiveName(version, platform))));
      const sbom = JSON.parse(readFileSync(`${archive}.spdx.json`, "utf8")) as {
        creationInfo: { created: string };
        packages: { name: string; versionInfo: string; checksums?: { checksumValue: string }[] }[];
      };
      expect(sbom.creationInfo.created).toBe("2023-11-14T22:13:20Z");
      expect(sbom.packages[0]?.checksums?.[0]?.checksumValue).toBe(sha256(archive));
      const inlined = sbom.packages.find((entry) => entry.name === "@kubernetes/client-node");
      expect(inlined?.versionInfo).toBe(client.version);
    }
    for (const asset of assets) expect(existsSync(asset), asset).toBe(true);
  });
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));
