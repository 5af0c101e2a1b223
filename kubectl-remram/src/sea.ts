/**
 * The krew archive of one platform: a Node single executable application (SEA) named kubectl-remram, so krew users
 * need no Node. Node 24 makes the preparation blob (`--experimental-sea-config`; `--build-sea` came in 25), postject
 * injects it into a copy of a Node binary of the same version, and the archive holds that executable, the
 * completion script, the third-party licenses and the repository's LICENSE if there is one. No V8 code cache: with
 * it the blob differs from build to build for some 25 ms less startup; without it the same commit gives the same
 * archive and sha256. Only the platform of the Node that runs this can be tested here; another platform's Node
 * binary (same version) can be injected the same way, but a macOS one must then be signed on macOS (built on macOS,
 * it is signed ad hoc here).
 */
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  createReadStream,
  createWriteStream,
  mkdirSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { basename, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import { createGzip } from "node:zlib";
import {
  type BuildStamp,
  bundle,
  completeShellShim,
  licensesName,
  repositoryLicense,
  thirdPartyLicenses,
} from "./bundle.js";
import { executableName, type Platform, platformOf } from "./krew.js";

const run = promisify(execFile);

/** The fuse Node's official binaries carry for SEA (doc/api/single-executable-applications.md). */
const seaFuse = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

/** The krew platform of this process's Node, if krew knows it. */
export function hostPlatform(): Platform | undefined {
  const arch = ({ x64: "amd64", arm64: "arm64" } as Record<string, string>)[process.arch];
  const os = ({ linux: "linux", darwin: "darwin", win32: "windows" } as Record<string, string>)[
    process.platform
  ];
  return arch && os ? platformOf(`${os}/${arch}`) : undefined;
}

export interface SeaOptions {
  platform: Platform;
  /** A Node binary for `platform`, of the same version as the Node running this (process.execPath by default). */
  nodeBinary: string;
  /** Scratch folder: the CommonJS bundle, the blob and the staged archive contents go here. */
  workDir: string;
  stamp: BuildStamp;
}

/** Build the single executable into `workDir/stage/` beside the archive's other files; returns the stage folder. */
export async function buildSea(options: SeaOptions): Promise<{ stage: string; executable: string }> {
  const { workDir, platform } = options;
  const stage = join(workDir, "stage");
  mkdirSync(stage, { recursive: true });
  const script = join(workDir, "kubectl-remram.cjs");
  const bundled = await bundle("sea", script, options.stamp);
  const blob = join(workDir, "kubectl-remram.blob");
  const config = join(workDir, "sea-config.json");
  // Relative paths, run in workDir: the blob records the main script's path, and a temporary folder's name in it
  // would make every build's executable differ.
  const settings = { disableExperimentalSEAWarning: true, useCodeCache: false };
  writeFileSync(config, JSON.stringify({ main: basename(script), output: basename(blob), ...settings }));
  await run(process.execPath, ["--experimental-sea-config", basename(config)], { cwd: workDir });
  const executable = join(stage, executableName(platform));
  copyFileSync(options.nodeBinary, executable);
  chmodSync(executable, 0o755);
  // Injecting breaks the signature of Node's macOS binary, and macOS on arm64 kills an executable without a valid
  // one: on macOS (the release builds each darwin archive there) drop it first and sign ad hoc after.
  const codesign = platform.startsWith("darwin/") && process.platform === "darwin";
  if (codesign) await run("codesign", ["--remove-signature", executable]);
  // postject's CLI in a child: its ELF library warns about every note section it cannot name, on stderr.
  await run(process.execPath, [
    createRequire(import.meta.url).resolve("postject/dist/cli.js"),
    executable,
    "NODE_SEA_BLOB",
    blob,
    "--sentinel-fuse",
    seaFuse,
    ...(platform.startsWith("darwin/") ? ["--macho-segment-name", "NODE_SEA"] : []),
  ]).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`postject failed: ${error.stderr ?? error.message}`);
  });
  if (codesign) await run("codesign", ["--sign", "-", executable]);
  if (!platform.startsWith("windows/"))
    writeFileSync(join(stage, "kubectl_complete-remram"), completeShellShim, { mode: 0o755 });
  writeFileSync(join(stage, licensesName), thirdPartyLicenses(bundled.packages));
  const license = repositoryLicense();
  if (license) copyFileSync(license, join(stage, "LICENSE"));
  return { stage, executable };
}

/** tar.gz of the stage's files, owned by root, with a fixed time: the same inputs give the same archive. */
export async function archive(stage: string, files: readonly string[], output: string): Promise<void> {
  const tar = spawn(
    "tar",
    [
      "--create",
      "--file=-",
      `--directory=${stage}`,
      "--owner=0",
      "--group=0",
      "--numeric-owner",
      "--mtime=@0",
      "--sort=name",
      ...files,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const exited = new Promise<void>((resolve, reject) =>
    tar.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`tar exited with ${code}`)))),
  );
  await Promise.all([pipeline(tar.stdout, createGzip({ level: 6 }), createWriteStream(output)), exited]);
}

export async function sha256Of(path: string): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(path), hash);
  return hash.digest("hex");
}
