// The real node's layout and configuration files, as pure functions of one NodeLayout. The node is a test host of
// its own: a network namespace with a veth pair to the host, in which containerd, the kubelet, kube-proxy,
// kube-router and the CNI bridge run (see ../../../../../docs/testbed-node.md).
import { join } from "node:path";

/** Addresses are fixed: there is one real node per machine (its namespace, veth and /run paths are singular). */
export const nodeNetwork = {
  namespace: "remram-node",
  /** Host end of the veth; the apiserver is reached here by the node and its pods. */
  hostVeth: "remram-host0",
  hostIp: "10.199.0.1",
  /** Node end of the veth, inside the namespace: the node's InternalIP. */
  nodeVeth: "eth0",
  nodeIp: "10.199.0.2",
  prefixLength: 30,
  clusterCidr: "10.42.0.0/16",
  serviceCidr: "10.43.0.0/16",
  clusterDns: "10.43.0.10",
  clusterDomain: "cluster.local",
} as const;

export const realNodeName = "remram-node";

/** Real-node pods tolerate this taint; kwok-tier pods (whose images exist nowhere) never land there. */
export const realNodeTaint = { key: "remram.io/real-node", value: "true", effect: "NoSchedule" } as const;
/** Real-node suites select the node by this label, so they never schedule onto kwok nodes. */
export const realNodeLabel = { key: "remram.io/testbed-node", value: "real" } as const;

/**
 * Annotations that place every pod of a namespace on the real node, read by the apiserver's PodNodeSelector and
 * PodTolerationRestriction admission plugins: what a product creates there (the operator's children) lands on the
 * real node unchanged, as on a box whose only node it is.
 */
export const realNodeNamespaceAnnotations: Record<string, string> = {
  "scheduler.alpha.kubernetes.io/node-selector": `${realNodeLabel.key}=${realNodeLabel.value}`,
  "scheduler.alpha.kubernetes.io/defaultTolerations": JSON.stringify([
    { key: realNodeTaint.key, operator: "Exists", effect: realNodeTaint.effect },
  ]),
};

export interface NodeLayout {
  /** Per-run state: sockets, kubelet root, CNI and IPAM data, pod logs, local-path volumes. */
  dir: string;
  /** https URL of the apiserver as the node sees it (the host end of the veth). */
  apiserverUrl: string;
  /** PEM file of the CA that signed the apiserver's serving certificate. */
  apiserverCa: string;
  /** PEM file of the CA whose client certificates the kubelet accepts (the apiserver's kubelet client). */
  kubeletClientCa: string;
}

export const nodePaths = (layout: Pick<NodeLayout, "dir">) => ({
  containerdConfig: join(layout.dir, "containerd", "config.toml"),
  containerdRoot: join(layout.dir, "containerd", "root"),
  containerdState: join(layout.dir, "containerd", "state"),
  containerdSocket: join(layout.dir, "containerd", "containerd.sock"),
  runcRoot: join(layout.dir, "containerd", "runc"),
  cniConfDir: join(layout.dir, "cni", "net.d"),
  cniTemplate: join(layout.dir, "cni", "conflist.tmpl"),
  ipamDir: join(layout.dir, "cni", "ipam"),
  kubeletRoot: join(layout.dir, "kubelet", "root"),
  kubeletCertDir: join(layout.dir, "kubelet", "pki"),
  kubeletConfig: join(layout.dir, "kubelet", "config.yaml"),
  kubeletResolvConf: join(layout.dir, "kubelet", "resolv.conf"),
  podLogs: join(layout.dir, "kubelet", "pod-logs"),
  volumePlugins: join(layout.dir, "kubelet", "volume-plugins"),
  kubeProxyConfig: join(layout.dir, "kube-proxy", "config.yaml"),
  localPathDir: join(layout.dir, "local-path"),
  kubeconfig: (who: string) => join(layout.dir, `${who}.kubeconfig`),
});

/** containerd 1.6 (Debian) config: every path private to the run, runc with cgroupfs, no registry. */
export function renderContainerdConfig(layout: NodeLayout, pauseImage: string): string {
  const paths = nodePaths(layout);
  return `version = 2
root = "${paths.containerdRoot}"
state = "${paths.containerdState}"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "${paths.containerdSocket}"
[ttrpc]
  address = "${paths.containerdSocket}.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "${join(layout.dir, "containerd", "opt")}"
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "${pauseImage}"
    disable_apparmor = true
    # This VM lacks CAP_SYS_RESOURCE: without this every sandbox fails to lower its oom_score_adj.
    restrict_oom_score_adj = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_selinux = false
    netns_mounts_under_state_dir = true
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          BinaryName = "/usr/sbin/runc"
          SystemdCgroup = false
          Root = "${paths.runcRoot}"
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "${paths.cniConfDir}"
      max_conf_num = 1
      conf_template = "${paths.cniTemplate}"
    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = ""
`;
}

/** The CNI template containerd fills with the node's podCIDR once the kubelet reports it (bridge, as one node needs). */
export function renderCniTemplate(layout: NodeLayout): string {
  const conflist = {
    cniVersion: "0.4.0",
    name: "remram-node",
    plugins: [
      {
        type: "bridge",
        bridge: "cni0",
        isGateway: true,
        ipMasq: true,
        hairpinMode: true,
        ipam: {
          type: "host-local",
          dataDir: nodePaths(layout).ipamDir,
          ranges: [[{ subnet: "{{.PodCIDR}}" }]],
          routes: [{ dst: "0.0.0.0/0" }],
        },
      },
      { type: "portmap", capabilities: { portMappings: true } },
    ],
  };
  return `${JSON.stringify(conflist, null, 2)}\n`;
}

export function renderKubeletConfig(layout: NodeLayout): string {
  const paths = nodePaths(layout);
  const config = {
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    cgroupDriver: "cgroupfs",
    containerRuntimeEndpoint: `unix://${paths.containerdSocket}`,
    failSwapOn: false,
    address: nodeNetwork.nodeIp,
    readOnlyPort: 0,
    healthzBindAddress: "127.0.0.1",
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: layout.kubeletClientCa },
    },
    authorization: { mode: "Webhook" },
    clusterDomain: nodeNetwork.clusterDomain,
    clusterDNS: [nodeNetwork.clusterDns],
    // No nameserver: the host's resolver is not ours to use, and pods must resolve cluster names only.
    resolvConf: paths.kubeletResolvConf,
    podLogsDir: paths.podLogs,
    volumePluginDir: paths.volumePlugins,
    registerWithTaints: [realNodeTaint],
    evictionHard: { "memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%" },
    // The images are imported, not pullable: a collected image could never come back.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

export function kubeletArgs(layout: Pick<NodeLayout, "dir">): string[] {
  const paths = nodePaths(layout);
  return [
    `--config=${paths.kubeletConfig}`,
    `--kubeconfig=${paths.kubeconfig("kubelet")}`,
    `--root-dir=${paths.kubeletRoot}`,
    `--cert-dir=${paths.kubeletCertDir}`,
    `--node-ip=${nodeNetwork.nodeIp}`,
    `--hostname-override=${realNodeName}`,
    `--node-labels=${realNodeLabel.key}=${realNodeLabel.value}`,
    "--v=1",
  ];
}

export function renderKubeProxyConfig(layout: NodeLayout): string {
  const config = {
    apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
    kind: "KubeProxyConfiguration",
    mode: "iptables",
    clusterCIDR: nodeNetwork.clusterCidr,
    hostnameOverride: realNodeName,
    clientConnection: { kubeconfig: nodePaths(layout).kubeconfig("kube-proxy") },
    // Lowering oom_score_adj needs CAP_SYS_RESOURCE, which this VM does not grant.
    oomScoreAdj: 0,
    conntrack: { maxPerCore: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
    iptables: { syncPeriod: "10s", minSyncPeriod: "1s" },
    healthzBindAddress: "127.0.0.1:10256",
    metricsBindAddress: "127.0.0.1:10249",
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** kube-router for NetworkPolicy only, as k3s embeds it (routing, service proxy and CNI are someone else's). */
export function kubeRouterArgs(layout: NodeLayout): string[] {
  return [
    `--kubeconfig=${nodePaths(layout).kubeconfig("kube-router")}`,
    `--hostname-override=${realNodeName}`,
    "--run-firewall=true",
    "--run-router=false",
    "--run-service-proxy=false",
    "--enable-cni=false",
    "--enable-pod-egress=false",
    `--service-cluster-ip-range=${nodeNetwork.serviceCidr}`,
    "--metrics-port=0",
    "--health-port=0",
  ];
}

/** A kubeconfig that verifies the apiserver's certificate (the node reaches it on the veth, not loopback). */
export function renderNodeKubeconfig(layout: NodeLayout, user: string, token: string): string {
  const kubeconfig = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: "remram-testbed",
        cluster: { server: layout.apiserverUrl, "certificate-authority": layout.apiserverCa },
      },
    ],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: "remram-testbed", context: { cluster: "remram-testbed", user } }],
    "current-context": "remram-testbed",
  };
  return `${JSON.stringify(kubeconfig, null, 2)}\n`;
}
