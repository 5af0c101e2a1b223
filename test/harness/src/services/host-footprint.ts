// What the real node and the podman service share about their footprint on the host: a network namespace joined to
// the host by a veth (whose alias names the owning checkout), the processes inside it, cgroup subtrees in every
// hierarchy and mounts under given directories. Each service lists its own names and paths; the reading and the
// stopping are here once.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { stopProcessGroup } from "../process.js";

const run = promisify(execFile);
export const cgroupRoot = "/sys/fs/cgroup";

/** A network namespace and the veth pair between it and the host (a /prefixLength of its own). */
export interface VethNamespace {
  namespace: string;
  hostVeth: string;
  innerVeth: string;
  hostIp: string;
  innerIp: string;
  prefixLength: number;
}

export const namespaceExists = (namespace: string): boolean => existsSync(`/run/netns/${namespace}`);
export const linkExists = (name: string): boolean => existsSync(`/sys/class/net/${name}`);

/** The checkout recorded as the alias of the host's veth, if any. */
export function vethOwner(hostVeth: string): string | undefined {
  try {
    const alias = readFileSync(`/sys/class/net/${hostVeth}/ifalias`, "utf8").trim();
    return alias === "" ? undefined : alias;
  } catch {
    return undefined;
  }
}

/** Run a command in the namespace's network (not `ip netns exec`, which remounts /sys and hides the cgroups). */
export async function nsenter(namespace: string, args: readonly string[]): Promise<string> {
  const { stdout } = await run("nsenter", [`--net=/run/netns/${namespace}`, "--", ...args]);
  return stdout;
}

/**
 * Create the namespace and its veth, the host's end aliased to `owner`, both ends up, the default route inside
 * pointing at the host (which does not forward, so nothing leads beyond it).
 */
export async function createVethNamespace(network: VethNamespace, owner: string): Promise<void> {
  const { namespace, hostVeth, innerVeth, hostIp, innerIp, prefixLength } = network;
  await run("ip", ["netns", "add", namespace]);
  await run("ip", ["link", "add", hostVeth, "type", "veth", "peer", "name", innerVeth, "netns", namespace]);
  await run("ip", ["link", "set", hostVeth, "alias", owner]);
  await run("ip", ["addr", "add", `${hostIp}/${prefixLength}`, "dev", hostVeth]);
  await run("ip", ["link", "set", hostVeth, "up"]);
  await nsenter(namespace, ["ip", "link", "set", "lo", "up"]);
  await nsenter(namespace, ["ip", "addr", "add", `${innerIp}/${prefixLength}`, "dev", innerVeth]);
  await nsenter(namespace, ["ip", "link", "set", innerVeth, "up"]);
  await nsenter(namespace, ["ip", "route", "add", "default", "via", hostIp]);
}

/** PIDs of the processes in the namespace (none if it does not exist). */
export async function namespacePids(namespace: string): Promise<number[]> {
  if (!namespaceExists(namespace)) return [];
  const { stdout } = await run("ip", ["netns", "pids", namespace]);
  return stdout
    .split("\n")
    .map((line) => Number.parseInt(line, 10))
    .filter((pid) => Number.isInteger(pid) && pid > 1);
}

/**
 * Another checkout's namespace with no process left in it: that run was killed before its teardown (a CI job cut
 * off, a power cut). Nothing of it is live, so a new run may take it away instead of refusing to start.
 */
export async function abandonedBy(
  namespace: string,
  hostVeth: string,
  owner: string,
): Promise<string | undefined> {
  const recorded = vethOwner(hostVeth);
  if (!namespaceExists(namespace) || recorded === undefined || recorded === owner) return undefined;
  return (await namespacePids(namespace)).length === 0 ? recorded : undefined;
}

/** Every cgroup directory under these paths (relative to a hierarchy's root), in every hierarchy, deepest first. */
export function cgroupSubtrees(relativePaths: readonly string[]): string[] {
  const dirs: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
    }
    dirs.push(dir);
  };
  for (const hierarchy of readdirSync(cgroupRoot)) {
    for (const relative of relativePaths) {
      const dir = join(cgroupRoot, hierarchy, relative);
      if (existsSync(dir) && statSync(dir).isDirectory()) walk(dir);
    }
  }
  return dirs.sort((a, b) => b.split("/").length - a.split("/").length);
}

/** PIDs in these cgroup directories. */
export function cgroupPids(dirs: readonly string[]): number[] {
  const pids = new Set<number>();
  for (const dir of dirs) {
    try {
      for (const line of readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n")) {
        const pid = Number.parseInt(line, 10);
        if (Number.isInteger(pid) && pid > 1) pids.add(pid);
      }
    } catch {
      // A cgroup removed while reading, or a hierarchy without cgroup.procs.
    }
  }
  return [...pids];
}

/** Host mount points at or under any of these directories, deepest first. */
export function mountsUnder(roots: readonly string[]): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4]?.replace(/\\040/g, " "))
    .filter((point): point is string => point !== undefined)
    .filter((point) => roots.some((root) => point === root || point.startsWith(`${root}/`)))
    .sort((a, b) => b.length - a.length);
}

/** SIGTERM, then SIGKILL after `graceMs`, all at once; resolves when every one is gone. */
export async function stopAll(pids: readonly number[], graceMs: number): Promise<void> {
  await Promise.all(pids.map((pid) => stopProcessGroup(pid, graceMs)));
}
