/**
 * Everything a release of kubectl-remram ships, into one folder: the npm package's tarball (`npm pack` of the
 * bundle), the krew archive of this machine's platform (a single executable), and the krew manifest listing every
 * platform, with the sha256 of each archive built here or handed in and placeholders for the rest.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { buildNpmPackage, buildStamp, packageRoot, repositoryLicense } from "./bundle.js";
import { archiveName, krewPluginSchema, type Platform, platforms, renderManifest } from "./krew.js";
import { archive, buildSea, hostPlatform, sha256Of } from "./sea.js";

const run = promisify(execFile);

export interface ReleaseOptions {
  out: string;
  baseUrl: string;
  /** Build the single-executable archive of this machine's platform. */
  sea: boolean;
  /** The Node binary the executable is made of; this process's by default. */
  nodeBinary?: string;
  /** Archives built elsewhere, by platform: their sha256 goes into the manifest. */
  archives: Partial<Record<Platform, string>>;
  /**
   * The platforms the manifest lists: by default those with an archive, which makes it installable (krew refuses
   * a manifest with any placeholder); naming others gives the template the release pipeline fills.
   */
  platforms?: readonly Platform[];
  /** Refuse a manifest with placeholders (what a published release needs). */
  requireAll: boolean;
}

export interface Built {
  path: string;
  bytes: number;
  durationMs: number;
}

export interface ReleaseResult {
  version: string;
  commit: string;
  bundle: Built;
  tarball: Built;
  archives: (Built & { platform: Platform; sha256: string })[];
  manifest: string;
  /** Whether krew can install the manifest as it is (no placeholder left). */
  installable: boolean;
}

const since = (started: number) => Math.round(performance.now() - started);

/** `npm pack` of the package into `out`; returns the tarball's path. */
export async function npmPack(out: string): Promise<string> {
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", out], {
    cwd: packageRoot,
    env: { ...process.env, npm_config_update_notifier: "false", npm_config_loglevel: "error" },
  });
  const [packed] = JSON.parse(stdout) as { filename: string }[];
  if (packed === undefined) throw new Error(`npm pack said nothing: ${stdout}`);
  return join(out, packed.filename);
}

/** The platform's archive, built from this checkout into `out`. */
export async function seaArchive(
  platform: Platform,
  out: string,
  stamp = buildStamp(),
  nodeBinary = process.execPath,
): Promise<Built & { platform: Platform; sha256: string }> {
  const started = performance.now();
  const workDir = mkdtempSync(join(tmpdir(), "kubectl-remram-sea-"));
  try {
    const { stage } = await buildSea({ platform, nodeBinary, workDir, stamp });
    const path = join(out, archiveName(stamp.version, platform));
    await archive(stage, readdirSync(stage), path);
    return {
      platform,
      path,
      sha256: await sha256Of(path),
      bytes: statSync(path).size,
      durationMs: since(started),
    };
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

export async function release(options: ReleaseOptions): Promise<ReleaseResult> {
  mkdirSync(options.out, { recursive: true });
  const stamp = buildStamp();
  const npm = await buildNpmPackage(stamp);
  let started = performance.now();
  const tarball = await npmPack(options.out);
  const packed = { path: tarball, bytes: statSync(tarball).size, durationMs: since(started) };
  const archives: ReleaseResult["archives"] = [];
  const host = hostPlatform();
  if (options.sea) {
    if (host === undefined) throw new Error(`krew has no platform for ${process.platform}/${process.arch}`);
    archives.push(await seaArchive(host, options.out, stamp, options.nodeBinary));
  }
  for (const [platform, path] of Object.entries(options.archives) as [Platform, string][]) {
    started = performance.now();
    archives.push({
      platform,
      path,
      sha256: await sha256Of(path),
      bytes: statSync(path).size,
      durationMs: since(started),
    });
  }
  const manifest = renderManifest({
    version: stamp.version,
    baseUrl: options.baseUrl,
    sha256s: Object.fromEntries(archives.map((built) => [built.platform, built.sha256])),
    withLicense: repositoryLicense() !== undefined,
    platforms:
      options.platforms ??
      platforms.filter((platform) => archives.some((built) => built.platform === platform)),
  });
  const { load } = await import("js-yaml");
  const checked = krewPluginSchema({ placeholders: !options.requireAll }).safeParse(load(manifest));
  if (!checked.success)
    throw new Error(`the krew manifest is not complete or valid: ${checked.error.message}`);
  const installable = krewPluginSchema({ placeholders: false }).safeParse(load(manifest)).success;
  const manifestPath = join(options.out, "remram.yaml");
  writeFileSync(manifestPath, manifest);
  return {
    version: stamp.version,
    commit: stamp.commit,
    bundle: { path: npm.outfile, bytes: npm.bytes, durationMs: Math.round(npm.durationMs) },
    tarball: packed,
    archives,
    manifest: manifestPath,
    installable,
  };
}
