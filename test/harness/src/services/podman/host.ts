// The podman service's footprint on the host, and its removal. The service's bridge, veths and iptables rules live
// in its network namespace (deleting the namespace deletes them), its mounts in a mount namespace of its own (gone
// with its last process), its files under one directory. What remains for the host to see is listed here: the
// namespace and its veth, processes, the containers' cgroups and that directory. teardownPodman() works without the
// service, so it also cleans up after a crashed run; podmanLeftovers() is what `make infra-down` and the integration
// tier's global setup check afterwards.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { waitFor } from "../../wait.js";
import {
  cgroupPids,
  cgroupRoot,
  cgroupSubtrees,
  createVethNamespace,
  linkExists,
  mountsUnder,
  namespaceExists as namespaceExistsNamed,
  namespacePids,
  stopAll,
  vethOwner,
} from "../host-footprint.js";
import type { hostBaseline } from "../node/host.js";
import { listContainerIds, removeContainer } from "./api.js";
import { podmanNetwork, podmanPaths } from "./config.js";

const run = promisify(execFile);
/** podman's cgroup parent with the cgroupfs manager; each container gets libpod-<id> beneath it. */
const libpodParent = "libpod_parent";

export const namespaceExists = (): boolean => namespaceExistsNamed(podmanNetwork.namespace);

/** The checkout that created the namespace: its service directory, kept as the alias of the host's veth. */
export const namespaceOwner = (): string | undefined => vethOwner(podmanNetwork.hostVeth);

/** Whether the namespace (if any) is this directory's: the veth says so, or, without a veth, the directory exists. */
export function ownedBy(dir: string): boolean {
  const owner = namespaceOwner();
  return owner === undefined ? existsSync(dir) : owner === dir;
}

/** The namespace and its veth; the host neither forwards nor routes anything beyond the /30. */
export async function createPodmanNetwork(owner: string): Promise<void> {
  const { namespace, hostVeth, serviceVeth, hostIp, serviceIp, prefixLength } = podmanNetwork;
  await createVethNamespace(
    { namespace, hostVeth, innerVeth: serviceVeth, hostIp, innerIp: serviceIp, prefixLength },
    owner,
  );
}

/** IDs of the containers in the service's own store (c/storage's record; readable without the service). */
function containerIdsInStore(graphroot: string): string[] {
  try {
    const file = join(graphroot, "overlay-containers", "containers.json");
    return (JSON.parse(readFileSync(file, "utf8")) as { id: string }[]).map((container) => container.id);
  } catch {
    return [];
  }
}

/** The cgroup directories of these containers in every hierarchy, deepest first. */
const containerCgroupDirs = (ids: readonly string[]): string[] =>
  cgroupSubtrees(ids.map((id) => join(libpodParent, `libpod-${id}`)));

/**
 * Remove the service from the host: its containers through the API while it still answers, then every process in
 * its containers' cgroups and in its namespace (the service, conmon), the namespace (and with it the bridge, veths
 * and iptables rules), the containers' cgroups, the directory. Safe to call when nothing is there; leaves a
 * namespace that belongs to another checkout alone. Resolves to what it could not remove.
 */
export async function teardownPodman(dir: string): Promise<string[]> {
  if (namespaceExists() && !ownedBy(dir)) {
    // Another checkout's service: none of its processes are ours; a stale directory of ours can go.
    rmSync(dir, { recursive: true, force: true });
    return [];
  }
  const paths = podmanPaths(dir);
  const ids = containerIdsInStore(paths.graphroot);
  if (existsSync(paths.socket)) {
    try {
      for (const id of await listContainerIds(paths.socket)) await removeContainer(paths.socket, id);
    } catch {
      // The service is gone or stuck: its containers' processes are stopped below, their cgroups removed.
    }
  }
  // Containers first: conmon, in the namespace, waits for its container to exit.
  await stopAll(cgroupPids(containerCgroupDirs(ids)), 2_000);
  await stopAll(await namespacePids(podmanNetwork.namespace), 10_000);
  if (namespaceExists()) await run("ip", ["netns", "delete", podmanNetwork.namespace]);
  // The kernel dismantles a namespace asynchronously: its veth goes a moment later.
  await waitFor(async () => (linkExists(podmanNetwork.hostVeth) ? undefined : true), {
    what: `veth ${podmanNetwork.hostVeth} gone with its namespace`,
    timeoutMs: 10_000,
    intervalMs: 100,
  });
  for (const cgroup of containerCgroupDirs(ids)) {
    try {
      rmdirSync(cgroup);
    } catch {
      // Still busy: reported below.
    }
  }
  // podman creates the parent (and a conmon child) on first use; the image builds' podman shares them, so they go
  // only when empty.
  for (const hierarchy of readdirSync(cgroupRoot)) {
    for (const cgroup of [join(libpodParent, "conmon"), libpodParent]) {
      try {
        rmdirSync(join(cgroupRoot, hierarchy, cgroup));
      } catch {
        // Absent, or in use by another podman.
      }
    }
  }
  for (const point of mountsUnder([dir])) await run("umount", ["-l", point]).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
  return containerCgroupDirs(ids).map((cgroup) => `cgroup ${cgroup}`);
}

/** What of this checkout's service is still on the host, and anything of podman's network outside a namespace. */
export async function podmanLeftovers(dir: string): Promise<string[]> {
  const found: string[] = [];
  const { namespace, hostVeth, bridge, cniNetwork } = podmanNetwork;
  if (namespaceExists() && ownedBy(dir)) found.push(`network namespace ${namespace}`);
  if (linkExists(hostVeth) && namespaceOwner() === dir) found.push(`veth ${hostVeth}`);
  if (linkExists(bridge)) found.push(`bridge ${bridge} in the host's namespace`);
  const { stdout: rules } = await run("iptables-save", []).catch(() => ({ stdout: "" }));
  if (rules.split("\n").some((line) => line.startsWith(":CNI-") || line.includes(bridge))) {
    found.push("CNI chains or bridge rules in the host's iptables");
  }
  for (const file of [`/var/lib/cni/networks/${cniNetwork}`, ...cniResults(cniNetwork)]) {
    if (existsSync(file)) found.push(`path ${file}`);
  }
  found.push(...mountsUnder([dir]).map((point) => `mount ${point}`));
  if (existsSync(dir)) found.push(`path ${dir}`);
  return found;
}

/** libcni's cached results of the service's network (they would be there if /var/lib were not private to it). */
function cniResults(network: string): string[] {
  const dir = "/var/lib/cni/results";
  try {
    return readdirSync(dir)
      .filter((name) => name.startsWith(`${network}-`))
      .map((name) => join(dir, name));
  } catch {
    return [];
  }
}

/** Against a baseline taken before the service started: the host's ip_forward and firewall, plus the leftovers. */
export async function podmanHostChanges(
  before: Awaited<ReturnType<typeof hostBaseline>>,
  after: Awaited<ReturnType<typeof hostBaseline>>,
  dir: string,
): Promise<string[]> {
  const changed: string[] = [];
  const key = "net/ipv4/ip_forward";
  if (after.sysctls[key] !== before.sysctls[key]) {
    changed.push(`sysctl ${key}: ${before.sysctls[key]} before, ${after.sysctls[key]} after`);
  }
  if (after.iptables !== before.iptables) changed.push("the host namespace's iptables rules changed");
  return [...changed, ...(await podmanLeftovers(dir))];
}
