/**
 * kubectl-remram's build, run with tsx:
 *   cli.ts build                       the npm package's dist/ (npm run build -w kubectl-remram)
 *   cli.ts release --out DIR [...]     tarball + this platform's krew archive + manifest (make kubectl-plugin)
 *   cli.ts manifest                    krew/remram.yaml, the committed manifest with placeholders
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { buildNpmPackage, packageRoot, packageVersion, relativeToRepo, repositoryLicense } from "./bundle.js";
import { defaultBaseUrl, type Platform, platformOf, platforms, renderManifest } from "./krew.js";
import { release } from "./release.js";

const usage = `usage: tsx kubectl-remram/src/cli.ts build
       tsx kubectl-remram/src/cli.ts release --out DIR [--base-url URL] [--no-sea] [--node PATH]
             [--archive OS/ARCH=FILE]... [--platforms OS/ARCH,...|all] [--require-all]
       tsx kubectl-remram/src/cli.ts manifest [--base-url URL]
`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    out: { type: "string" },
    "base-url": { type: "string", default: defaultBaseUrl },
    "no-sea": { type: "boolean", default: false },
    node: { type: "string" },
    archive: { type: "string", multiple: true, default: [] },
    platforms: { type: "string" },
    "require-all": { type: "boolean", default: false },
    help: { type: "boolean", short: "h" },
  },
});

function platform(value: string): Platform {
  const found = platformOf(value);
  if (found === undefined) throw new Error(`unknown platform ${value} (os/arch as krew names them)`);
  return found;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

async function main(): Promise<void> {
  const [command] = positionals;
  if (values.help || command === undefined) {
    process.stdout.write(usage);
    return;
  }
  if (command === "build") {
    const built = await buildNpmPackage();
    process.stdout.write(
      `${relativeToRepo(built.outfile)}: ${mb(built.bytes)}, ${built.packages.length} packages inlined, ${Math.round(built.durationMs)} ms (${built.stamp.version} ${built.stamp.commit})\n`,
    );
    return;
  }
  if (command === "manifest") {
    const path = join(packageRoot, "krew", "remram.yaml");
    const input = { version: packageVersion(), baseUrl: values["base-url"], sha256s: {} };
    writeFileSync(path, renderManifest({ ...input, withLicense: repositoryLicense() !== undefined }));
    process.stdout.write(`${relativeToRepo(path)}\n`);
    return;
  }
  if (command !== "release" || values.out === undefined) throw new Error(usage);
  const archives: Partial<Record<Platform, string>> = {};
  for (const entry of values.archive) {
    const [name, file] = entry.split("=");
    if (!name || !file) throw new Error(`--archive wants OS/ARCH=FILE, not ${entry}`);
    archives[platform(name)] = resolve(file);
  }
  const result = await release({
    out: resolve(values.out),
    baseUrl: values["base-url"],
    sea: !values["no-sea"],
    ...(values.node ? { nodeBinary: values.node } : {}),
    archives,
    ...(values.platforms === "all"
      ? { platforms }
      : values.platforms
        ? { platforms: values.platforms.split(",").map(platform) }
        : {}),
    requireAll: values["require-all"],
  });
  const lines = [
    `kubectl-remram ${result.version} (${result.commit || "no commit"})`,
    `  bundle   ${relativeToRepo(result.bundle.path)}  ${mb(result.bundle.bytes)}  ${result.bundle.durationMs} ms`,
    `  npm      ${relativeToRepo(result.tarball.path)}  ${mb(result.tarball.bytes)}  ${result.tarball.durationMs} ms`,
    ...result.archives.map(
      (built) =>
        `  krew     ${relativeToRepo(built.path)}  ${mb(built.bytes)}  ${built.durationMs} ms  sha256 ${built.sha256}`,
    ),
    `  manifest ${relativeToRepo(result.manifest)}  ${result.installable ? "installable: kubectl krew install --manifest=remram.yaml --archive=ARCHIVE" : "a template: fill every PLACEHOLDER (--archive OS/ARCH=FILE) before krew can install it"}`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
