// The real node's footprint on the host, and its removal. Everything the node creates is either inside its network
// namespace (veths, the cni0 bridge, every iptables rule of kube-proxy, kube-router and the CNI plugins: deleting
// the namespace deletes them) or listed here: processes, mounts, cgroups, the paths containerd and the kubelet
// hard-code, and the kernel settings the kubelet rewrites. teardownNode() works without the apiserver, so it also
// cleans up after a crashed run; nodeLeftovers() is what the infra-down test and the next start check.
import { execFile } from "node:child_process";
import { existsSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { promisify } from "node:util";
import {
  cgroupPids,
  cgroupSubtrees,
  linkExists,
  mountsUnder,
  namespaceExists as namespaceExistsNamed,
  namespacePids,
  stopAll,
  vethOwner,
} from "../host-footprint.js";
import { nodeNetwork } from "./config.js";

const run = promisify(execFile);

/** Paths the kubelet, containerd and the CNI plugins use whatever their configuration says. */
export const hardCodedPaths = ["/var/lib/kubelet", "/var/lib/cni", "/run/containerd", "/var/log/containers"];

/** Host-wide kernel settings the node changes (the kubelet rewrites the first three at start-up). */
export const hostSysctls = [
  "kernel/panic",
  "kernel/panic_on_oops",
  "vm/overcommit_memory",
  "net/ipv4/ip_forward",
  "vm/max_map_count",
] as const;

/** Top-level cgroups of the kubelet (cgroupfs driver) and of containerd's k8s.io namespace. */
const nodeCgroups = ["kubepods", "k8s.io"];

/** OpenSearch's bootstrap minimum, which a k3s box's host preparation sets (the operator reports it otherwise). */
export const openSearchMaxMapCount = 262144;

/** Raise vm.max_map_count for OpenSearch pods, as a box's host preparation would; teardown restores the saved value. */
export function prepareHostForOpenSearch(): void {
  const file = "/proc/sys/vm/max_map_count";
  if (Number(readFileSync(file, "utf8").trim()) < openSearchMaxMapCount) {
    writeFileSync(file, String(openSearchMaxMapCount));
  }
}

export function readSysctls(): Record<string, string> {
  return Object.fromEntries(
    hostSysctls.map((key) => [key, readFileSync(`/proc/sys/${key}`, "utf8").trim()] as const),
  );
}

/** Record the host's settings before the node first changes them; a crashed run's record is kept (it is older). */
export function saveSysctls(file: string): void {
  if (!existsSync(file)) writeFileSync(file, `${JSON.stringify(readSysctls(), null, 2)}\n`);
}

function restoreSysctls(file: string): void {
  if (!existsSync(file)) return;
  const saved = JSON.parse(readFileSync(file, "utf8")) as Record<string, string>;
  for (const [key, value] of Object.entries(saved)) {
    if (readFileSync(`/proc/sys/${key}`, "utf8").trim() !== value) writeFileSync(`/proc/sys/${key}`, value);
  }
  rmSync(file);
}

export const namespaceExists = (): boolean => namespaceExistsNamed(nodeNetwork.namespace);

/** The checkout whose node holds the namespace: its node directory, kept as the alias of the host's veth. */
export const nodeOwner = (): string | undefined => vethOwner(nodeNetwork.hostVeth);

/** Every cgroup of the node (the kubelet's pods, containerd's k8s.io namespace), deepest first. */
const nodeCgroupDirs = (): string[] => cgroupSubtrees(nodeCgroups);
/** Mount points under the node's directory and the hard-coded paths, deepest first. */
const nodeMounts = (nodeDir: string): string[] => mountsUnder([nodeDir, ...hardCodedPaths]);

/** The node's processes whose command name passes `test`, found in its namespace whoever started them. */
async function namedInNode(test: (name: string) => boolean): Promise<number[]> {
  return (await namespacePids(nodeNetwork.namespace)).filter((pid) => test(processName(pid) ?? ""));
}

/**
 * Stop the kubelet first (left running while the pods' processes are stopped, it starts their containers again),
 * then the pods' processes. By name, not by a PID its starter kept: `make infra-down` runs in another process, and
 * a test may have restarted the kubelet (restartNodeRuntime).
 */
async function stopKubeletAndPods(): Promise<void> {
  await stopAll(await namedInNode((name) => name === "kubelet"), 10_000);
  await stopAll(cgroupPids(nodeCgroupDirs()), 2_000);
}

/**
 * What `k3s-killall.sh` or a power cut does to the node's runtime: the kubelet, every pod's processes, containerd
 * and its shims stopped. kube-proxy, kube-router and the node's state directory stay.
 */
export async function stopNodeRuntime(): Promise<void> {
  await stopKubeletAndPods();
  // /proc/PID/comm is cut at 15 characters: containerd-shim-runc-v2 reads "containerd-shim".
  await stopAll(
    await namedInNode((name) => name === "containerd" || name.startsWith("containerd-shim")),
    10_000,
  );
}

/**
 * Remove the node from the host, in an order that leaves nothing busy: the kubelet, the pods' processes, then every
 * other process in the namespace (containerd and its shims, kube-proxy, kube-router), mounts, the namespace itself,
 * cgroups, the hard-coded paths, the node's state directory and the kernel settings. Safe to call when nothing is
 * there.
 */
export async function teardownNode(nodeDir: string, sysctlFile: string): Promise<void> {
  await stopKubeletAndPods();
  await stopAll(await namespacePids(nodeNetwork.namespace), 10_000);
  for (const point of nodeMounts(nodeDir)) {
    await run("umount", ["-l", point]).catch(() => undefined);
  }
  if (namespaceExists()) await run("ip", ["netns", "delete", nodeNetwork.namespace]);
  for (const dir of nodeCgroupDirs()) {
    try {
      // cgroup directories go with rmdir only (their files cannot be unlinked).
      rmdirSync(dir);
    } catch {
      // Still busy: nodeLeftovers reports it.
    }
  }
  for (const path of [...hardCodedPaths, nodeDir]) rmSync(path, { recursive: true, force: true });
  restoreSysctls(sysctlFile);
}

/** A process's command name (/proc/PID/comm), or undefined once it is gone. */
function processName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return undefined;
  }
}

/** What of the node is still on the host; empty after a clean stop. */
export async function nodeLeftovers(nodeDir: string, sysctlFile: string): Promise<string[]> {
  const found: string[] = [];
  if (namespaceExists()) found.push(`network namespace ${nodeNetwork.namespace}`);
  if (linkExists(nodeNetwork.hostVeth)) found.push(`veth ${nodeNetwork.hostVeth}`);
  found.push(...nodeMounts(nodeDir).map((point) => `mount ${point}`));
  found.push(...nodeCgroupDirs().map((dir) => `cgroup ${dir}`));
  found.push(...cgroupPids(nodeCgroupDirs()).map((pid) => `process ${pid} in a pod cgroup`));
  for (const path of [...hardCodedPaths, nodeDir, sysctlFile])
    if (existsSync(path)) found.push(`path ${path}`);
  return found;
}

/** The host's own state the node must leave as it found it: kernel settings and the host namespace's firewall. */
export async function hostBaseline(): Promise<{ sysctls: Record<string, string>; iptables: string }> {
  const rules = async (command: string): Promise<string> => {
    const { stdout } = await run(command, []).catch(() => ({ stdout: "" }));
    // Counters and the dump's timestamps change by themselves; the rules are what matter.
    return stdout
      .split("\n")
      .filter((line) => !line.startsWith("#"))
      .map((line) => line.replace(/\[\d+:\d+\]/g, ""))
      .join("\n");
  };
  return {
    sysctls: readSysctls(),
    iptables: `${await rules("iptables-save")}\n${await rules("ip6tables-save")}`,
  };
}

/** What differs from a baseline taken before the node started, plus what of the node is still there. */
export async function hostChanges(
  before: Awaited<ReturnType<typeof hostBaseline>>,
  nodeDir: string,
  sysctlFile: string,
): Promise<string[]> {
  const after = await hostBaseline();
  const changed = Object.entries(before.sysctls)
    .filter(([key, value]) => after.sysctls[key] !== value)
    .map(([key, value]) => `sysctl ${key}: ${value} before, ${after.sysctls[key]} after`);
  if (after.iptables !== before.iptables) changed.push("the host namespace's iptables rules changed");
  return [...changed, ...(await nodeLeftovers(nodeDir, sysctlFile))];
}
