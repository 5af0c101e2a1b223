// Checks that package-lock.json would install from scratch with `npm ci` on any platform npm records: every
// dependency an entry declares (optional, platform-specific ones included) resolves to a locked entry, and every
// locked package has a version and an integrity hash. The registry may start serving new platform packages of an
// existing version (as it did for @biomejs/cli-*); a lock that lacks them makes `npm install` rewrite it and
// `npm ci` refuse, so this runs before every install and in the unit tier.
// Runs with no dependencies installed (`node test/harness/src/npm-lock.ts`): Node strips the types.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

export interface LockEntry {
  version?: string;
  integrity?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export interface Lockfile {
  lockfileVersion?: number;
  packages?: Record<string, LockEntry>;
}

/** Where npm would find `name` when required from the package at `from`: nearest node_modules walking up. */
export function resolveInLock(
  packages: Record<string, LockEntry>,
  from: string,
  name: string,
): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = dir === "" ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (candidate in packages) return candidate;
    if (dir === "") return undefined;
    const cut = dir.lastIndexOf("/node_modules/");
    // A workspace folder ("cortex") or a top-level package ("node_modules/a") resolves next from the root.
    dir = cut === -1 ? "" : dir.slice(0, cut);
  }
}

/** Every reason this lock would not install from scratch; empty when it is complete. */
export function findLockGaps(lock: Lockfile): string[] {
  const gaps: string[] = [];
  if ((lock.lockfileVersion ?? 0) < 2)
    return ["lockfileVersion must be 2 or 3 (run npm install with npm >= 7)"];
  const packages = lock.packages ?? {};
  for (const [path, entry] of Object.entries(packages)) {
    const isWorkspaceOrRoot = !path.startsWith("node_modules/") && !path.includes("/node_modules/");
    if (entry.link) continue;
    if (!isWorkspaceOrRoot) {
      if (!entry.version) gaps.push(`${path}: no version`);
      if (!entry.integrity) gaps.push(`${path}: no integrity hash`);
    }
    const required = {
      ...entry.dependencies,
      ...entry.optionalDependencies,
      ...(isWorkspaceOrRoot ? entry.devDependencies : {}),
    };
    for (const [name, peerRange] of Object.entries(entry.peerDependencies ?? {})) {
      if (!entry.peerDependenciesMeta?.[name]?.optional) required[name] ??= peerRange;
    }
    for (const name of Object.keys(required)) {
      if (!resolveInLock(packages, path, name)) {
        gaps.push(`${path || "(root)"} needs ${name}, which the lock does not contain`);
      }
    }
  }
  return gaps;
}

function main(): void {
  const lockPath = resolve(process.argv[2] ?? "package-lock.json");
  const gaps = findLockGaps(JSON.parse(readFileSync(lockPath, "utf8")) as Lockfile);
  if (gaps.length === 0) return;
  console.error(`${lockPath} would not install from scratch:\n  ${gaps.join("\n  ")}`);
  console.error(
    "Fix: npm install --package-lock-only (adds the missing entries), review the diff, commit the lock.",
  );
  process.exit(1);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
