import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Repository root, found from this file's location so tests may run from any cwd. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** Where the installers in hack/ put binaries and models (outside the repo, shared across clones). */
export const cacheDir = process.env.REMRAM_CACHE ?? join(homedir(), ".cache", "remram");

/** Git-ignored state of this checkout: env file, PID files, logs and per-run data. */
export const stateDir = join(repoRoot, ".remram");
export const pidDir = join(stateDir, "pids");
export const logDir = join(stateDir, "logs");
export const runDir = join(stateDir, "run");
export const envFile = join(stateDir, "env");

export const binPath = (name: string): string => join(cacheDir, "bin", name);
