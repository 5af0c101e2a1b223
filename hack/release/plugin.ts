/**
 * The kubectl plugin's release assets, once every platform's krew archive is built (each on its own runner): the
 * krew manifest rendered again with all of them (kubectl-remram's `release --platforms all --require-all`, which
 * refuses a placeholder), the npm tarball, the archives themselves and an SPDX SBOM beside each, in one folder the
 * workflow attaches to the GitHub release as it is.
 */
import { copyFileSync, readdirSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { packageVersion } from "../../kubectl-remram/src/bundle.js";
import { archiveName, type Platform, platforms } from "../../kubectl-remram/src/krew.js";
import { release } from "../../kubectl-remram/src/release.js";
import { sha256Of } from "../../kubectl-remram/src/sea.js";
import { versionsEnv } from "./plan.js";
import { type InlinedPackage, inlinedPackages, pluginSbom } from "./sbom.js";

/** Every platform's archive in `dir`, by the name the matrix builds give it; a missing or unknown one is an error. */
export function findArchives(dir: string, version: string): Record<Platform, string> {
  const expected = new Map(platforms.map((platform) => [archiveName(version, platform), platform]));
  const present = readdirSync(dir).filter((name) => name.endsWith(".tar.gz"));
  const problems = [
    ...[...expected.keys()].filter((name) => !present.includes(name)).map((name) => `missing ${name}`),
    ...present.filter((name) => !expected.has(name)).map((name) => `${name} is not an archive of ${version}`),
  ];
  if (problems.length > 0) throw new Error(`${dir}: ${problems.join("; ")}`);
  return Object.fromEntries([...expected].map(([name, platform]) => [platform, join(dir, name)])) as Record<
    Platform,
    string
  >;
}

/** SOURCE_DATE_EPOCH (the workflow sets the commit's time) or now, as SPDX wants it. */
export function sbomCreated(epoch = process.env.SOURCE_DATE_EPOCH): string {
  const seconds = epoch === undefined || epoch === "" ? Math.floor(Date.now() / 1000) : Number(epoch);
  if (!Number.isInteger(seconds)) throw new Error(`SOURCE_DATE_EPOCH ${epoch} is not whole seconds`);
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export interface PluginAssets {
  version: string;
  manifest: string;
  tarball: string;
  /** Everything to attach to the GitHub release. */
  assets: string[];
}

export async function assemblePlugin(options: {
  archives: string;
  baseUrl: string;
  out: string;
  /** The inlined packages (the bundler's list by default). */
  packages?: readonly InlinedPackage[];
}): Promise<PluginAssets> {
  const version = packageVersion();
  const archives = findArchives(options.archives, version);
  const result = await release({
    out: options.out,
    baseUrl: options.baseUrl,
    sea: false,
    archives,
    platforms,
    requireAll: true,
  });
  const packages = options.packages ?? (await inlinedPackages());
  const created = sbomCreated();
  const assets = [result.tarball.path, result.manifest];
  for (const platform of platforms) {
    const archive = archives[platform];
    const copy = join(options.out, basename(archive));
    if (resolve(archive) !== resolve(copy)) copyFileSync(archive, copy);
    const sbom = `${copy}.spdx.json`;
    const document = pluginSbom({
      version,
      platform,
      sha256: await sha256Of(archive),
      baseUrl: options.baseUrl,
      nodeVersion: versionsEnv("NODE_VERSION"),
      packages,
      created,
    });
    writeFileSync(sbom, `${JSON.stringify(document, null, 2)}\n`);
    assets.push(copy, sbom);
  }
  return { version, manifest: result.manifest, tarball: result.tarball.path, assets };
}
