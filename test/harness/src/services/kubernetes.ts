import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binPath, cacheDir, runDir } from "../paths.js";
import { freePort } from "../ports.js";
import { isAlive, type ManagedProcess, spawnService } from "../process.js";
import { waitFor } from "../wait.js";
import { kubeRequest } from "./kube-request.js";
import { kwokNodeAnnotation, kwokNodeAnnotationValue } from "./kwok-nodes.js";
import { nodeNetwork, realNodeName } from "./node/config.js";
import { type StartedNode, startRealNode } from "./node/index.js";
import { writeKubeletClientPki } from "./node/pki.js";
import type { KubernetesEndpoints, Started, StartOptions } from "./types.js";

const installHint = "run `bash hack/install-kubernetes.sh` (or `make setup`)";

/** Where hack/install-kubernetes.sh writes the kwok Stage objects (kwok refuses to start without them). */
export const kwokStagesFile = join(cacheDir, "share", "kwok-stages.yaml");

const binaries = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"] as const;

/** One bearer-token identity of the static token file. */
export interface TokenIdentity {
  token: string;
  user: string;
  groups: readonly string[];
}

/** Everything that places one control plane on disk and on ports; the argument builders derive only from this. */
export interface ControlPlaneLayout {
  /** Per-instance directory: etcd data, keys, token file, kubeconfigs. */
  dir: string;
  etcdPort: number;
  apiserverPort: number;
  kwokPort: number;
  stagesFile: string;
  /** Set when a real node joins: the address its pods reach the apiserver on (the host end of its veth). */
  nodeAdvertiseAddress?: string;
}

const file = {
  etcdData: (layout: ControlPlaneLayout) => join(layout.dir, "etcd"),
  certDir: (layout: ControlPlaneLayout) => join(layout.dir, "pki"),
  // The apiserver self-signs into --cert-dir; this file holds its serving certificate and the signing CA.
  servingCert: (layout: ControlPlaneLayout) => join(layout.dir, "pki", "apiserver.crt"),
  tokens: (layout: ControlPlaneLayout) => join(layout.dir, "tokens.csv"),
  saKey: (layout: ControlPlaneLayout) => join(layout.dir, "sa.key"),
  saPub: (layout: ControlPlaneLayout) => join(layout.dir, "sa.pub"),
  kubeconfig: (layout: ControlPlaneLayout, who: string) => join(layout.dir, `${who}.kubeconfig`),
  // The apiserver's client certificate for the kubelet (logs, exec, port-forward) and the CA the kubelet trusts.
  kubeletClientCa: (layout: ControlPlaneLayout) => join(layout.dir, "pki", "kubelet-client-ca.crt"),
  kubeletClientCert: (layout: ControlPlaneLayout) => join(layout.dir, "pki", "kubelet-client.crt"),
  kubeletClientKey: (layout: ControlPlaneLayout) => join(layout.dir, "pki", "kubelet-client.key"),
};

export const apiserverUrl = (layout: ControlPlaneLayout): string =>
  `https://127.0.0.1:${layout.apiserverPort}`;

export function etcdArgs(layout: ControlPlaneLayout): string[] {
  const clientUrl = `http://127.0.0.1:${layout.etcdPort}`;
  return [
    `--data-dir=${file.etcdData(layout)}`,
    `--listen-client-urls=${clientUrl}`,
    `--advertise-client-urls=${clientUrl}`,
    // A single member never talks to peers; port 0 keeps it from claiming 2380.
    "--listen-peer-urls=http://127.0.0.1:0",
    // Test data is thrown away; fsync would only make every write wait on a shared disk.
    "--unsafe-no-fsync",
    "--log-level=warn",
  ];
}

export function kubeApiserverArgs(layout: ControlPlaneLayout): string[] {
  return [
    `--etcd-servers=http://127.0.0.1:${layout.etcdPort}`,
    "--bind-address=127.0.0.1",
    "--advertise-address=127.0.0.1",
    `--secure-port=${layout.apiserverPort}`,
    `--cert-dir=${file.certDir(layout)}`,
    `--token-auth-file=${file.tokens(layout)}`,
    // Like k3s: Node + RBAC, every default admission plugin (ValidatingAdmissionPolicy is GA and on by default).
    "--authorization-mode=Node,RBAC",
    "--allow-privileged=true",
    `--service-cluster-ip-range=${nodeNetwork.serviceCidr}`,
    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
    `--service-account-key-file=${file.saPub(layout)}`,
    `--service-account-signing-key-file=${file.saKey(layout)}`,
    "--profiling=false",
    ...(layout.nodeAdvertiseAddress === undefined
      ? []
      : [
          // Pods reach the `kubernetes` Service's endpoint here (a forwarder on the veth; loopback is their own).
          `--advertise-address=${layout.nodeAdvertiseAddress}`,
          `--kubelet-client-certificate=${file.kubeletClientCert(layout)}`,
          `--kubelet-client-key=${file.kubeletClientKey(layout)}`,
          // The machine's hostname resolves to 127.0.0.1: reach kubelets by their InternalIP.
          "--kubelet-preferred-address-types=InternalIP,Hostname",
          // Namespaces annotated for the real node place their pods there (realNodeNamespaceAnnotations).
          "--enable-admission-plugins=PodNodeSelector,PodTolerationRestriction",
        ]),
  ];
}

export function kubeControllerManagerArgs(layout: ControlPlaneLayout): string[] {
  return [
    `--kubeconfig=${file.kubeconfig(layout, "kube-controller-manager")}`,
    // Each controller acts as its own service account, so RBAC is exercised as in a real cluster.
    "--use-service-account-credentials=true",
    `--service-account-private-key-file=${file.saKey(layout)}`,
    `--root-ca-file=${file.servingCert(layout)}`,
    // Nothing scrapes it here; 0 keeps it off a fixed port (10257) that a second test bed would collide on.
    "--secure-port=0",
    ...(layout.nodeAdvertiseAddress === undefined
      ? []
      : // The bridge CNI on the real node takes its pod range from the Node's spec.podCIDR.
        [
          "--allocate-node-cidrs=true",
          `--cluster-cidr=${nodeNetwork.clusterCidr}`,
          "--node-cidr-mask-size=24",
          `--service-cluster-ip-range=${nodeNetwork.serviceCidr}`,
        ]),
  ];
}

export function kubeSchedulerArgs(layout: ControlPlaneLayout): string[] {
  return [`--kubeconfig=${file.kubeconfig(layout, "kube-scheduler")}`, "--secure-port=0"];
}

export function kwokArgs(layout: ControlPlaneLayout): string[] {
  return [
    `--kubeconfig=${file.kubeconfig(layout, "kwok")}`,
    `--config=${layout.stagesFile}`,
    "--manage-all-nodes=false",
    `--manage-nodes-with-annotation-selector=${kwokNodeAnnotation}=${kwokNodeAnnotationValue}`,
    "--node-ip=10.0.0.1",
    "--cidr=10.0.0.1/24",
    // The heartbeat-with-lease stage renews a Lease per node, as kubelets do; 40 s is kwokctl's default.
    "--node-lease-duration-seconds=40",
    `--server-address=127.0.0.1:${layout.kwokPort}`,
  ];
}

/** kube-apiserver's --token-auth-file: `token,user,uid,"group1,group2"`. */
export function renderTokenFile(identities: readonly TokenIdentity[]): string {
  return identities
    .map(({ token, user, groups }) => {
      const line = `${token},${user},${user}`;
      return groups.length > 0 ? `${line},"${groups.join(",")}"` : line;
    })
    .join("\n")
    .concat("\n");
}

/** A kubeconfig with one cluster, one token user and one context (JSON is valid YAML for every client). */
export function renderKubeconfig(server: string, identity: Pick<TokenIdentity, "user" | "token">): string {
  const kubeconfig = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "remram-testbed", cluster: { server, "insecure-skip-tls-verify": true } }],
    users: [{ name: identity.user, user: { token: identity.token } }],
    contexts: [{ name: "remram-testbed", context: { cluster: "remram-testbed", user: identity.user } }],
    "current-context": "remram-testbed",
  };
  return `${JSON.stringify(kubeconfig, null, 2)}\n`;
}

/**
 * Remove per-instance directories of earlier runs (each holds 60+ MB of preallocated etcd WAL). One is stale when
 * neither the process that created it (still starting) nor its etcd (running, possibly detached) is alive.
 */
function removeStaleInstances(): void {
  let entries: string[];
  try {
    entries = readdirSync(runDir).filter((entry) => entry.startsWith("kubernetes-"));
  } catch {
    return;
  }
  for (const entry of entries) {
    const pids = ["owner.pid", "etcd.pid"].map((name) => readPid(join(runDir, entry, name)));
    if (!pids.some((pid) => pid !== undefined && isAlive(pid))) {
      rmSync(join(runDir, entry), { recursive: true, force: true });
    }
  }
}

function readPid(path: string): number | undefined {
  if (!existsSync(path)) return undefined;
  const pid = Number.parseInt(readFileSync(path, "utf8"), 10);
  return Number.isInteger(pid) && pid > 1 ? pid : undefined;
}

function writeCredentials(layout: ControlPlaneLayout, identities: Record<string, TokenIdentity>): void {
  mkdirSync(file.certDir(layout), { recursive: true });
  const serviceAccountKeys = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  writeFileSync(file.saKey(layout), serviceAccountKeys.privateKey, { mode: 0o600 });
  writeFileSync(file.saPub(layout), serviceAccountKeys.publicKey);
  writeFileSync(file.tokens(layout), renderTokenFile(Object.values(identities)), { mode: 0o600 });
  for (const [who, identity] of Object.entries(identities)) {
    writeFileSync(file.kubeconfig(layout, who), renderKubeconfig(apiserverUrl(layout), identity), {
      mode: 0o600,
    });
  }
}

const newToken = (): string => randomBytes(24).toString("hex");

/**
 * A single-node-style control plane on loopback: etcd, kube-apiserver (Node+RBAC, static tokens), the controller
 * manager and scheduler (so Deployments get pods and pods get nodes), and kwok, which plays the kubelet for every
 * Node annotated kwok.x-k8s.io/node=fake (see createKwokNode). Resolves when all of them work, not just listen.
 */
export async function startKubernetes(
  options: StartOptions & { realNode?: boolean } = {},
): Promise<Started<KubernetesEndpoints>> {
  for (const name of binaries) {
    if (!existsSync(binPath(name)))
      throw new Error(`${name} is not installed at ${binPath(name)}: ${installHint}`);
  }
  if (!existsSync(kwokStagesFile))
    throw new Error(`kwok stages are missing at ${kwokStagesFile}: ${installHint}`);
  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
  const remaining = (): number => Math.max(deadline - Date.now(), 1_000);

  removeStaleInstances();
  const [etcdPort, apiserverPort] = [await freePort(), await freePort()];
  const layout: ControlPlaneLayout = {
    dir: join(runDir, `kubernetes-${apiserverPort}`),
    etcdPort,
    apiserverPort,
    // Picked again right before kwok starts (below).
    kwokPort: 0,
    stagesFile: kwokStagesFile,
    ...(options.realNode ? { nodeAdvertiseAddress: nodeNetwork.hostIp } : {}),
  };
  rmSync(layout.dir, { recursive: true, force: true });
  mkdirSync(layout.dir, { recursive: true });
  writeFileSync(join(layout.dir, "owner.pid"), `${process.pid}\n`);
  const identities = {
    admin: { token: newToken(), user: "remram-admin", groups: ["system:masters"] },
    "kube-controller-manager": { token: newToken(), user: "system:kube-controller-manager", groups: [] },
    "kube-scheduler": { token: newToken(), user: "system:kube-scheduler", groups: [] },
    // kwok stands in for every kubelet (node status, leases, pod status); a node identity per fake node is overkill.
    kwok: { token: newToken(), user: "kwok", groups: ["system:masters"] },
    // The real node's own identities, none of them admin: the Node authorizer and the default
    // system:node-proxier binding cover the first two, kube-router gets a ClusterRole of its own.
    kubelet: { token: newToken(), user: `system:node:${realNodeName}`, groups: ["system:nodes"] },
    "kube-proxy": { token: newToken(), user: "system:kube-proxy", groups: [] },
    "kube-router": { token: newToken(), user: "remram:kube-router", groups: [] },
  } satisfies Record<string, TokenIdentity>;
  writeCredentials(layout, identities);
  if (options.realNode) {
    await writeKubeletClientPki({
      ca: file.kubeletClientCa(layout),
      cert: file.kubeletClientCert(layout),
      key: file.kubeletClientKey(layout),
    });
  }
  const endpoints: KubernetesEndpoints = {
    server: apiserverUrl(layout),
    kubeconfig: file.kubeconfig(layout, "admin"),
    token: identities.admin.token,
    caInsecure: true,
  };

  const processes: ManagedProcess[] = [];
  let node: StartedNode | undefined;
  const spawn = (name: string, args: string[]): ManagedProcess => {
    const started = spawnService({
      name: `${name}-${apiserverPort}`,
      command: binPath(name),
      args,
      detach: options.detach,
    });
    processes.push(started);
    return started;
  };
  // Reverse start order: kwok and the controllers go before the apiserver, the apiserver before etcd.
  // The node goes first: a busy apiserver ignores SIGTERM while kubelets still talk to it.
  const stop = async (): Promise<void> => {
    await node?.stop();
    for (const started of [...processes].reverse()) await started.stop();
    if (!options.detach) rmSync(layout.dir, { recursive: true, force: true });
  };
  const anyExited = (): string | undefined => {
    const dead = processes.find((started) => started.exitReason() !== undefined);
    return dead && `${dead.name} ${dead.exitReason()}\n--- ${dead.logFile} (tail) ---\n${dead.logTail(20)}`;
  };

  try {
    const etcd = spawn("etcd", etcdArgs(layout));
    writeFileSync(join(layout.dir, "etcd.pid"), `${etcd.pid}\n`);
    await waitFor(async () => etcdHealthy(etcdPort), {
      what: `etcd on ${etcdPort}`,
      timeoutMs: remaining(),
      abortIf: anyExited,
    });

    spawn("kube-apiserver", kubeApiserverArgs(layout));
    await waitFor(
      async () => {
        const response = await kubeRequest(endpoints, "GET", "/readyz");
        return response.status === 200 ? true : undefined;
      },
      {
        what: `kube-apiserver at ${endpoints.server}/readyz`,
        timeoutMs: remaining(),
        intervalMs: 500,
        abortIf: anyExited,
      },
    );

    spawn("kube-controller-manager", kubeControllerManagerArgs(layout));
    spawn("kube-scheduler", kubeSchedulerArgs(layout));
    // kwok's port is picked only now: the apiserver's many connections to etcd take ephemeral ports from the same
    // range, and one picked at the start was taken by them before kwok could bind it (a CI run failed so).
    const kwokPort = await freePort();
    layout.kwokPort = kwokPort;
    spawn("kwok", kwokArgs(layout));
    await Promise.all([
      waitForLease(endpoints, "kube-controller-manager", remaining(), anyExited),
      waitForLease(endpoints, "kube-scheduler", remaining(), anyExited),
      // Pods are admitted only once their namespace's default ServiceAccount exists; the controller manager makes it.
      waitFor(
        async () =>
          (await kubeRequest(endpoints, "GET", "/api/v1/namespaces/default/serviceaccounts/default"))
            .status === 200
            ? true
            : undefined,
        { what: "the default ServiceAccount", timeoutMs: remaining(), intervalMs: 500, abortIf: anyExited },
      ),
      waitFor(async () => kwokHealthy(kwokPort), {
        what: `kwok on ${kwokPort}`,
        timeoutMs: remaining(),
        abortIf: anyExited,
      }),
    ]);
    if (options.realNode) {
      node = await startRealNode(
        {
          apiserverPort,
          apiserverCa: file.servingCert(layout),
          kubeletClientCa: file.kubeletClientCa(layout),
          admin: endpoints,
          tokens: {
            kubelet: identities.kubelet.token,
            kubeProxy: identities["kube-proxy"].token,
            kubeRouter: identities["kube-router"].token,
          },
          kubeRouterUser: identities["kube-router"].user,
        },
        { detach: options.detach, timeoutMs: remaining() },
      );
      processes.push(...node.processes);
      endpoints.node = node.endpoints;
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoints, processes, stop };
}

async function etcdHealthy(port: number): Promise<true | undefined> {
  const response = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(5_000) });
  const health = (await response.json()) as { health?: string };
  return health.health === "true" ? true : undefined;
}

async function kwokHealthy(port: number): Promise<true | undefined> {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5_000) });
  await response.body?.cancel();
  return response.ok ? true : undefined;
}

/** The controller manager and the scheduler each hold a leader Lease in kube-system once they are working. */
function waitForLease(
  endpoints: KubernetesEndpoints,
  name: string,
  timeoutMs: number,
  abortIf: () => string | undefined,
): Promise<true> {
  return waitFor(
    async () => {
      const response = await kubeRequest(
        endpoints,
        "GET",
        `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${name}`,
      );
      if (response.status !== 200) return undefined;
      const lease = JSON.parse(response.body) as { spec?: { holderIdentity?: string } };
      return lease.spec?.holderIdentity ? true : undefined;
    },
    { what: `${name} leader lease`, timeoutMs, intervalMs: 500, abortIf },
  );
}
