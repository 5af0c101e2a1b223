/**
 * The plugin as one file with esbuild: operator/src/cli/kubectl-remram.ts and everything it imports
 * (@kubernetes/client-node included) inlined, nothing left to resolve but node: built-ins. Two flavors: `npm`, an
 * ES module with a shebang for Node >= 20 (the package's bin), and `sea`, CommonJS for a Node single executable
 * (whose injected main script must be CommonJS on Node 24). The build stamps its version, commit and flavor in
 * (operator/src/cli/version.ts reads them). Beside the bundle: the licenses of the packages it inlines.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

export const packageRoot = fileURLToPath(new URL("..", import.meta.url));
export const repoRoot = join(packageRoot, "..");
export const cliEntry = join(repoRoot, "operator", "src", "cli", "kubectl-remram.ts");
export const distDir = join(packageRoot, "dist");
export const npmBundleName = "kubectl-remram.mjs";
export const completeShimName = "kubectl_complete-remram.mjs";
export const licensesName = "THIRD_PARTY_LICENSES.txt";

export type Flavor = "npm" | "sea";

export interface BuildStamp {
  version: string;
  /** Short commit id, `-dirty` when the tree had changes; empty outside a git checkout. */
  commit: string;
}

export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")) as { version: string }).version;
}

/** The package's version and the checkout's commit ($KUBECTL_REMRAM_COMMIT wins: a release pipeline sets it). */
export function buildStamp(): BuildStamp {
  const git = (...args: string[]) =>
    execFileSync("git", args, {
      cwd: repoRoot,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  let commit = process.env.KUBECTL_REMRAM_COMMIT ?? "";
  if (commit === "") {
    try {
      commit = git("rev-parse", "--short=12", "HEAD");
      if (git("status", "--porcelain", "--untracked-files=no") !== "") commit += "-dirty";
    } catch {
      commit = "";
    }
  }
  return { version: packageVersion(), commit };
}

export interface BundleResult {
  outfile: string;
  bytes: number;
  /** Package directories (relative to the repository, `node_modules/...`) whose code the bundle inlines. */
  packages: string[];
}

/** The package directory of each bundled file under node_modules, once each, sorted. */
export function packagesOf(inputs: readonly string[]): string[] {
  const found = new Set<string>();
  for (const input of inputs) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match?.[1]) found.add(match[1]);
  }
  return [...found].sort();
}

export async function bundle(flavor: Flavor, outfile: string, stamp: BuildStamp): Promise<BundleResult> {
  mkdirSync(dirname(outfile), { recursive: true });
  const result = await build({
    entryPoints: [cliEntry],
    outfile,
    bundle: true,
    platform: "node",
    format: flavor === "npm" ? "esm" : "cjs",
    target: flavor === "npm" ? "node20" : "node24",
    // CommonJS packages inlined into an ES module still call require() for built-ins.
    ...(flavor === "npm"
      ? {
          banner: {
            js: 'import { createRequire as __remramCreateRequire } from "node:module";\nconst require = __remramCreateRequire(import.meta.url);',
          },
        }
      : {}),
    alias: { undici: join(packageRoot, "src", "undici-stub.ts") },
    define: {
      __KUBECTL_REMRAM_VERSION__: JSON.stringify(stamp.version),
      __KUBECTL_REMRAM_COMMIT__: JSON.stringify(stamp.commit),
      __KUBECTL_REMRAM_FLAVOR__: JSON.stringify(flavor),
    },
    minify: true,
    legalComments: "none",
    logLevel: "warning",
    metafile: true,
    absWorkingDir: repoRoot,
  });
  const output = Object.values(result.metafile.outputs)[0];
  return {
    outfile,
    bytes: output?.bytes ?? 0,
    packages: packagesOf(Object.keys(output?.inputs ?? {})),
  };
}

/** Every inlined package's name, version, license and license text (MIT, ISC and Apache-2.0 ask for it). */
export function thirdPartyLicenses(packages: readonly string[]): string {
  const sections = packages.map((dir) => {
    const root = join(repoRoot, dir);
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      name: string;
      version: string;
      license?: string;
    };
    const file = readdirSync(root).find((name) => /^(licen[cs]e|copying|notice)/i.test(name));
    const text = file ? readFileSync(join(root, file), "utf8").trim() : "(no license file in the package)";
    return `${manifest.name}@${manifest.version} — ${manifest.license ?? "license not declared"}\n\n${text}`;
  });
  return `kubectl-remram inlines these packages; their licenses follow.\n\n${sections.join(`\n\n${"-".repeat(78)}\n\n`)}\n`;
}

/** What kubectl runs for `kubectl remram <TAB>` (kubectl >= 1.26): kubectl-remram with `__complete` first. */
export const completeShim = `#!/usr/bin/env node
// kubectl runs kubectl_complete-remram for \`kubectl remram <TAB>\`: kubectl-remram's __complete, same words.
process.argv.splice(2, 0, "__complete");
await import("./${npmBundleName}");
`;

/** The same for the single executable: a script beside it (krew cannot link a second executable). */
export const completeShellShim = `#!/bin/sh
# kubectl runs kubectl_complete-remram for \`kubectl remram <TAB>\`: kubectl-remram's __complete, same words.
exec kubectl-remram __complete "$@"
`;

export interface NpmBuild extends BundleResult {
  stamp: BuildStamp;
  durationMs: number;
}

/** dist/ of the npm package: the bundle, the completion shim and the licenses. */
export async function buildNpmPackage(stamp = buildStamp()): Promise<NpmBuild> {
  const started = performance.now();
  const result = await bundle("npm", join(distDir, npmBundleName), stamp);
  writeFileSync(join(distDir, completeShimName), completeShim, { mode: 0o755 });
  writeFileSync(join(distDir, licensesName), thirdPartyLicenses(result.packages));
  return { ...result, stamp, durationMs: performance.now() - started };
}

/** The repository's LICENSE, when it has one (krew's index asks for one in every archive). */
export function repositoryLicense(): string | undefined {
  const path = join(repoRoot, "LICENSE");
  return existsSync(path) ? path : undefined;
}

/** A path to print: relative inside the repository, absolute outside it. */
export function relativeToRepo(path: string): string {
  const inside = relative(repoRoot, path);
  return inside.startsWith("..") ? path : inside;
}
