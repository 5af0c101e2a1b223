// A real single-node Kubernetes node beside the test bed's control plane: the parts k3s embeds (containerd + runc,
// the kubelet, kube-proxy, the bridge CNI, kube-router for NetworkPolicy, CoreDNS, local-path-provisioner), in a
// network namespace of their own. Requires root (network namespaces, mounts, cgroups).
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { binPath, runDir } from "../../paths.js";
import { type ManagedProcess, spawnService } from "../../process.js";
import { pinned, readVersionsEnv } from "../../versions.js";
import { waitFor } from "../../wait.js";
import { abandonedBy, createVethNamespace, nsenter as nsenterNamespace } from "../host-footprint.js";
import { kubeRequest } from "../kube-request.js";
import { kubectl } from "../kubectl.js";
import { type NodeObject, nodeSchedulable } from "../kwok-nodes.js";
import type { KubernetesEndpoints, RealNodeEndpoints } from "../types.js";
import { corednsManifests, kubeRouterRbac, localPathManifests } from "./addons.js";
import {
  kubeletArgs,
  kubeRouterArgs,
  type NodeLayout,
  nodeNetwork,
  nodePaths,
  realNodeLabel,
  realNodeName,
  realNodeNamespaceAnnotations,
  realNodeTaint,
  renderCniTemplate,
  renderContainerdConfig,
  renderKubeletConfig,
  renderKubeProxyConfig,
  renderNodeKubeconfig,
} from "./config.js";
import {
  namespaceExists,
  nodeOwner,
  prepareHostForOpenSearch,
  saveSysctls,
  stopNodeRuntime,
  teardownNode,
} from "./host.js";
import { appArchives, imageTagged, importImages, nodePartArchives, readAppImages } from "./images.js";
import { ingressEndpoints, traefikManifests } from "./ingress.js";

const run = promisify(execFile);

/** The node's state lives here for one run; teardown removes it. */
export const nodeDir = join(runDir, "node");
export const nodeSysctlFile = join(runDir, "node-sysctls.json");
const installHint = "run `bash hack/install-node-parts.sh` (or `make setup`)";

/** What the control plane hands the node: where to reach it and the node's own credentials. */
export interface NodeControlPlane {
  apiserverPort: number;
  /** PEM: the apiserver's self-signed serving certificate (its own CA). */
  apiserverCa: string;
  /** PEM: the CA of the apiserver's kubelet client certificate. */
  kubeletClientCa: string;
  /** The admin's endpoints: the node's RBAC and add-ons are applied, and its status read, as the admin. */
  admin: Pick<KubernetesEndpoints, "server" | "token" | "kubeconfig">;
  tokens: { kubelet: string; kubeProxy: string; kubeRouter: string };
  kubeRouterUser: string;
}

export interface StartedNode {
  endpoints: RealNodeEndpoints;
  processes: ManagedProcess[];
  stop(): Promise<void>;
}

/** Stop early, naming the cause and the fix, for everything a start on this host would trip over. */
async function checkNodeHost(): Promise<void> {
  if (process.getuid?.() !== 0) {
    throw new Error(
      "the real node needs root (network namespaces, mounts, cgroups); run as root or drop `node` from REMRAM_TESTBED",
    );
  }
  const commands: Record<string, string> = {
    "/usr/bin/containerd": "apt-get install containerd (hack/install-node-parts.sh does)",
    "/usr/bin/ctr": "apt-get install containerd",
    "/usr/sbin/runc": "apt-get install runc",
    "/usr/lib/cni/bridge": "apt-get install containernetworking-plugins",
    "/usr/bin/socat": "apt-get install socat",
    "/usr/sbin/ipset": "apt-get install ipset",
  };
  for (const [path, fix] of Object.entries(commands)) {
    if (!existsSync(path)) throw new Error(`${path} is missing: ${fix}`);
  }
  for (const name of ["kubelet", "kube-proxy", "kube-router", "kubectl"]) {
    if (!existsSync(binPath(name)))
      throw new Error(`${name} is not installed at ${binPath(name)}: ${installHint}`);
  }
  if (!readFileSync("/proc/filesystems", "utf8").includes("overlay")) {
    throw new Error(
      "the kernel has no overlay filesystem (containerd's snapshotter needs it): load the overlay module",
    );
  }
  if (!existsSync("/sys/fs/cgroup/memory") && !existsSync("/sys/fs/cgroup/cgroup.controllers")) {
    throw new Error("no memory cgroup is mounted under /sys/fs/cgroup: the kubelet cannot run pods here");
  }
  // Another checkout's node killed before its teardown: nothing of it runs, so its leftovers go.
  const abandoned = await abandonedBy(nodeNetwork.namespace, nodeNetwork.hostVeth, nodeDir);
  if (abandoned !== undefined) {
    console.warn(`[testbed] removing the abandoned node of ${abandoned} (no process left in its namespace)`);
    await teardownNode(abandoned, join(dirname(abandoned), "node-sysctls.json"));
  }
  // Another checkout's live node: starting would tear it down.
  const owner = nodeOwner();
  if (namespaceExists() && owner !== undefined && owner !== nodeDir) {
    throw new Error(
      `network namespace ${nodeNetwork.namespace} belongs to the node of ${owner}: stop it there (make infra-down), or, if that run is gone, \`ip netns delete ${nodeNetwork.namespace}\``,
    );
  }
  // A containerd we did not start owns the default socket: its shims share /run/containerd with ours.
  if (existsSync("/run/containerd/containerd.sock") && !namespaceExists()) {
    throw new Error(
      "another containerd is running on this host (/run/containerd/containerd.sock): stop it, the real node's containerd shares /run/containerd/s with it",
    );
  }
}

async function createNetwork(): Promise<void> {
  const { namespace, hostVeth, nodeVeth, hostIp, nodeIp, prefixLength } = nodeNetwork;
  // One node per machine: the veth's alias tells another checkout whose node this is (see checkNodeHost).
  await createVethNamespace(
    { namespace, hostVeth, innerVeth: nodeVeth, hostIp, innerIp: nodeIp, prefixLength },
    nodeDir,
  );
  const nsenter = (args: readonly string[]) => nsenterNamespace(namespace, args);
  // Per-namespace settings: routing between the bridge and the veth, Service traffic through the bridge.
  await nsenter(["sysctl", "-qw", "net.ipv4.ip_forward=1"]);
  await nsenter(["sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=1"]);
  // Tests on the host reach pods and Services through the node, as a LAN client of a k3s box would.
  for (const cidr of [nodeNetwork.clusterCidr, nodeNetwork.serviceCidr]) {
    await run("ip", ["route", "add", cidr, "via", nodeIp, "dev", hostVeth]);
  }
}

function spawnInNodeNamespace(
  name: string,
  command: string,
  args: readonly string[],
  detach?: boolean,
): ManagedProcess {
  return spawnService({
    name: `node-${name}`,
    command: "nsenter",
    args: [`--net=/run/netns/${nodeNetwork.namespace}`, "--", command, ...args],
    detach,
  });
}

/** The node's two runtime daemons as the node starts them, at first and after restartNodeRuntime. */
function spawnNodeDaemon(daemon: "containerd" | "kubelet", detach?: boolean): ManagedProcess {
  const layout = { dir: nodeDir };
  return daemon === "containerd"
    ? spawnInNodeNamespace(
        daemon,
        "/usr/bin/containerd",
        ["--config", nodePaths(layout).containerdConfig],
        detach,
      )
    : spawnInNodeNamespace(daemon, binPath("kubelet"), kubeletArgs(layout), detach);
}

function containerdListening(socket: string, timeoutMs: number, abortIf: () => string | undefined) {
  return waitFor(async () => (existsSync(socket) ? true : undefined), {
    what: "containerd's socket",
    timeoutMs,
    abortIf,
  });
}

function kubectlApply(kubeconfig: string, manifests: readonly object[]): Promise<string> {
  const list = { apiVersion: "v1", kind: "List", items: manifests };
  return kubectl(kubeconfig, ["apply", "--server-side", "-f", "-"], JSON.stringify(list));
}

/** The node object while the scheduler can place pods there (Ready, not-ready taint lifted); else undefined. */
async function schedulableNode(
  admin: NodeControlPlane["admin"],
): Promise<(NodeObject & { spec?: { podCIDR?: string } }) | undefined> {
  const response = await kubeRequest(admin, "GET", `/api/v1/nodes/${realNodeName}`);
  if (response.status !== 200) return undefined;
  const node = JSON.parse(response.body) as NodeObject & { spec?: { podCIDR?: string } };
  return nodeSchedulable(node) ? node : undefined;
}

/** The node's pod CIDR once it is schedulable. */
async function schedulablePodCidr(admin: NodeControlPlane["admin"]): Promise<string | undefined> {
  return (await schedulableNode(admin))?.spec?.podCIDR;
}

/** When the node last said Ready (ms since the epoch), if it is schedulable now. */
async function readyHeartbeat(admin: NodeControlPlane["admin"]): Promise<number | undefined> {
  const ready = (await schedulableNode(admin))?.status?.conditions?.find((c) => c.type === "Ready");
  return ready?.lastHeartbeatTime === undefined ? undefined : Date.parse(ready.lastHeartbeatTime);
}

function rolledOut(kubeconfig: string, deployment: string, timeoutMs: number): Promise<string> {
  const args = ["-n", "kube-system", "rollout", "status", `deployment/${deployment}`];
  return kubectl(
    kubeconfig,
    [...args, `--timeout=${Math.ceil(timeoutMs / 1000)}s`],
    undefined,
    timeoutMs + 5_000,
  );
}

/**
 * Start the node against a running control plane and resolve once it is Ready, Services resolve through CoreDNS
 * and the default `local-path` StorageClass provisions. A failed start removes everything it made.
 */
export async function startRealNode(
  controlPlane: NodeControlPlane,
  options: { detach?: boolean; timeoutMs?: number } = {},
): Promise<StartedNode> {
  await checkNodeHost();
  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
  const remaining = (): number => Math.max(deadline - Date.now(), 1_000);
  // A crashed run leaves its namespace, mounts and settings: take them away before anything binds.
  await teardownNode(nodeDir, nodeSysctlFile);

  const layout: NodeLayout = {
    dir: nodeDir,
    apiserverUrl: `https://${nodeNetwork.hostIp}:${controlPlane.apiserverPort}`,
    apiserverCa: controlPlane.apiserverCa,
    kubeletClientCa: controlPlane.kubeletClientCa,
  };
  const paths = nodePaths(layout);
  const processes: ManagedProcess[] = [];
  // Teardown ends every process in the namespace; what is left is the forwarder on the host.
  const stop = async (): Promise<void> => {
    await teardownNode(nodeDir, nodeSysctlFile);
    for (const started of processes) await started.stop(1_000);
  };
  const anyExited = (): string | undefined => {
    const dead = processes.find((started) => started.exitReason() !== undefined);
    return dead && `${dead.name} ${dead.exitReason()}\n--- ${dead.logFile} (tail) ---\n${dead.logTail(20)}`;
  };
  const spawnInNode = (name: string, command: string, args: readonly string[]): ManagedProcess => {
    const started = spawnInNodeNamespace(name, command, args, options.detach);
    processes.push(started);
    return started;
  };
  const spawnDaemon = (daemon: "containerd" | "kubelet"): void => {
    processes.push(spawnNodeDaemon(daemon, options.detach));
  };

  try {
    saveSysctls(nodeSysctlFile);
    prepareHostForOpenSearch();
    for (const dir of [
      paths.cniConfDir,
      paths.ipamDir,
      paths.kubeletRoot,
      paths.kubeletCertDir,
      paths.podLogs,
      paths.volumePlugins,
      paths.localPathDir,
      join(nodeDir, "kube-proxy"),
      join(nodeDir, "containerd"),
    ]) {
      mkdirSync(dir, { recursive: true });
    }
    const [archives, appImageArchives] = await Promise.all([nodePartArchives(), appArchives()]);
    const appImages = readAppImages(appImageArchives);
    const versions = readVersionsEnv();
    const pauseImage = imageTagged(archives, `localhost/pause:${pinned("PAUSE_VERSION", versions)}`);
    writeFileSync(paths.containerdConfig, renderContainerdConfig(layout, pauseImage));
    writeFileSync(paths.cniTemplate, renderCniTemplate(layout));
    writeFileSync(paths.kubeletConfig, renderKubeletConfig(layout));
    writeFileSync(paths.kubeletResolvConf, "");
    writeFileSync(paths.kubeProxyConfig, renderKubeProxyConfig(layout));
    const identities = {
      kubelet: controlPlane.tokens.kubelet,
      "kube-proxy": controlPlane.tokens.kubeProxy,
      "kube-router": controlPlane.tokens.kubeRouter,
    };
    const users = {
      kubelet: `system:node:${realNodeName}`,
      "kube-proxy": "system:kube-proxy",
      "kube-router": controlPlane.kubeRouterUser,
    };
    for (const [who, token] of Object.entries(identities)) {
      writeFileSync(
        paths.kubeconfig(who),
        renderNodeKubeconfig(layout, users[who as keyof typeof users], token),
        { mode: 0o600 },
      );
    }

    await createNetwork();
    // The apiserver listens on loopback only; this forwards the host end of the veth to it for the node and pods.
    processes.push(
      spawnService({
        name: "node-apiserver-proxy",
        command: "socat",
        args: [
          `TCP-LISTEN:${controlPlane.apiserverPort},bind=${nodeNetwork.hostIp},fork,reuseaddr`,
          `TCP:127.0.0.1:${controlPlane.apiserverPort}`,
        ],
        detach: options.detach,
      }),
    );

    spawnDaemon("containerd");
    await containerdListening(paths.containerdSocket, remaining(), anyExited);
    await importImages(paths.containerdSocket, archives);
    // The appliance's images (2.3 GB, about 35 s) load while the kubelet registers and the add-ons roll out.
    const appImport = importImages(paths.containerdSocket, appImageArchives).then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
    );

    await kubectlApply(controlPlane.admin.kubeconfig, kubeRouterRbac(controlPlane.kubeRouterUser));
    spawnDaemon("kubelet");
    spawnInNode("kube-proxy", binPath("kube-proxy"), [`--config=${paths.kubeProxyConfig}`]);
    const podCidr = await waitFor(async () => schedulablePodCidr(controlPlane.admin), {
      what: `node ${realNodeName} Ready with a pod CIDR`,
      timeoutMs: remaining(),
      intervalMs: 500,
      abortIf: anyExited,
    });

    // kube-router looks its node up once at start-up and gives up if it is not registered yet.
    spawnInNode("kube-router", binPath("kube-router"), kubeRouterArgs(layout));
    const images = {
      coredns: imageTagged(archives, `localhost/coredns:${pinned("COREDNS_VERSION", versions)}`),
      localPath: imageTagged(
        archives,
        `localhost/local-path-provisioner:v${pinned("LOCAL_PATH_PROVISIONER_VERSION", versions)}`,
      ),
      busybox: imageTagged(archives, "localhost/busybox:"),
      traefik: imageTagged(archives, `localhost/traefik:v${pinned("TRAEFIK_VERSION", versions)}`),
      app: appImages,
    };
    await kubectlApply(controlPlane.admin.kubeconfig, [
      ...corednsManifests(images.coredns),
      ...localPathManifests(images, paths.localPathDir),
      ...traefikManifests(images.traefik),
    ]);
    await Promise.all([
      rolledOut(controlPlane.admin.kubeconfig, "coredns", remaining()),
      rolledOut(controlPlane.admin.kubeconfig, "local-path-provisioner", remaining()),
      rolledOut(controlPlane.admin.kubeconfig, "traefik", remaining()),
    ]);
    const importFailure = await appImport;
    if (importFailure) throw importFailure;
    return {
      endpoints: {
        name: realNodeName,
        ip: nodeNetwork.nodeIp,
        podCidr,
        clusterDns: nodeNetwork.clusterDns,
        namespace: nodeNetwork.namespace,
        containerdSocket: paths.containerdSocket,
        images,
        ingress: ingressEndpoints(),
        nodeSelector: { [realNodeLabel.key]: realNodeLabel.value },
        tolerations: [{ key: realNodeTaint.key, operator: "Exists" }],
        namespaceAnnotations: realNodeNamespaceAnnotations,
      },
      processes,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The node's kubelet and containerd stopped with every pod's processes (stopNodeRuntime: what `k3s-killall.sh` or a
 * power cut does), then started again as a reboot would. Resolves once the node is Ready again; the pods come back
 * through the kubelet, from the same state directory and local-path volumes. The new processes outlive the caller
 * (a test's worker): teardown finds them in the node's namespace by name.
 */
export async function restartNodeRuntime(
  admin: NodeControlPlane["admin"],
  timeoutMs = 120_000,
): Promise<{ stoppedMs: number; nodeReadyMs: number }> {
  const started = Date.now();
  const paths = nodePaths({ dir: nodeDir });
  await stopNodeRuntime();
  const stoppedMs = Date.now() - started;
  // The socket file outlives a stopped containerd: waiting for it means waiting for the new one.
  rmSync(paths.containerdSocket, { force: true });
  const containerd = spawnNodeDaemon("containerd", true);
  await containerdListening(paths.containerdSocket, timeoutMs, containerd.exitReason);
  const kubelet = spawnNodeDaemon("kubelet", true);
  // A stop this short may never show as NotReady: wait for a Ready the new kubelet posted (heartbeats are in seconds).
  const since = Math.floor(started / 1000) * 1000;
  await waitFor(async () => ((await readyHeartbeat(admin)) ?? 0) >= since || undefined, {
    what: `node ${realNodeName} Ready again, posted by the restarted kubelet`,
    timeoutMs,
    intervalMs: 500,
    abortIf: () => containerd.exitReason() ?? kubelet.exitReason(),
  });
  return { stoppedMs, nodeReadyMs: Date.now() - started };
}
