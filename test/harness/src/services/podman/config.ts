// The podman service's layout and configuration, as pure functions of one directory. The service is a test host of
// its own: a network namespace with a veth pair to the host, in which `podman system service` runs with its CNI
// bridge, iptables rules and ip_forward, inside a private mount namespace whose tmpfs mounts take what podman writes
// to fixed host paths (see ../../../../../docs/testbed-podman.md).
import { join } from "node:path";

/** One podman service per machine: the namespace, the veth and the addresses are fixed (the node's are 10.199.0.0/30). */
export const podmanNetwork = {
  namespace: "remram-podman",
  /** Host end of the veth; its alias names the checkout that owns the namespace. */
  hostVeth: "remram-podman0",
  hostIp: "10.199.1.1",
  /** Namespace end of the veth: published container ports are reached here. */
  serviceVeth: "eth0",
  serviceIp: "10.199.1.2",
  prefixLength: 30,
  /** The CNI network containers join by default, and its bridge (podman's usual name, only ever inside the namespace). */
  cniNetwork: "remram-podman",
  bridge: "cni-podman0",
  subnet: "10.88.0.0/16",
  gateway: "10.88.0.1",
} as const;

/**
 * Paths podman, conmon and the CNI plugins write whatever their configuration says. Inside the service's mount
 * namespace each gets a tmpfs, so nothing lands on the host's disk and everything goes when the namespace's last
 * process ends: container network namespaces (/run/netns), CNI results (/var/lib/cni) and the blob-info cache
 * (/var/lib/containers), scratch files (/var/tmp).
 */
export const privateMounts = [
  { path: "/run/netns", mode: "0755" },
  { path: "/var/lib", mode: "0755" },
  { path: "/var/tmp", mode: "1777" },
] as const;

export const podmanPaths = (dir: string) => ({
  containersConf: join(dir, "containers.conf"),
  storageConf: join(dir, "storage.conf"),
  runcWrapper: join(dir, "runc"),
  runcRoot: join(dir, "runc-state"),
  cniConfigDir: join(dir, "cni"),
  ipamDir: join(dir, "ipam"),
  graphroot: join(dir, "storage"),
  runroot: join(dir, "run"),
  staticDir: join(dir, "libpod"),
  volumes: join(dir, "volumes"),
  tmp: join(dir, "tmp"),
  libpodTmp: join(dir, "libpod-tmp"),
  eventsLog: join(dir, "events.log"),
  socket: join(dir, "podman.sock"),
});
export type PodmanPaths = ReturnType<typeof podmanPaths>;

/** containers.conf: the image builds' settings (hack/install-images.sh) plus a bridge network of the service's own. */
export function renderContainersConf(paths: PodmanPaths): string {
  return `# Written by the test harness; read through CONTAINERS_CONF by the podman service only.
[containers]
# podman's default RLIMIT_NOFILE and RLIMIT_NPROC exceed this machine's hard limits ("error setting rlimit type 7").
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
cgroups = "no-conmon"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "${paths.eventsLog}"
# libpod's database and volumes of this service alone (the images' store keeps its own).
static_dir = "${paths.staticDir}"
volume_path = "${paths.volumes}"
tmp_dir = "${paths.libpodTmp}"
image_copy_tmp_dir = "${paths.tmp}"
[engine.runtimes]
runc = ["${paths.runcWrapper}"]
[network]
network_backend = "cni"
network_config_dir = "${paths.cniConfigDir}"
cni_plugin_dirs = ["/usr/lib/cni"]
default_network = "${podmanNetwork.cniNetwork}"
`;
}

/** storage.conf: containers in the service's own store; the images come read-only from the cache's (make images). */
export function renderStorageConf(paths: PodmanPaths, imageStore: string): string {
  return `# Written by the test harness; read through CONTAINERS_STORAGE_CONF by the podman service only.
[storage]
driver = "overlay"
graphroot = "${paths.graphroot}"
runroot = "${paths.runroot}"
[storage.options]
additionalimagestores = ["${imageStore}"]
`;
}

/** runc keeps container state under --root (/run/runc by default): the wrapper keeps it in the service's directory. */
export function renderRuncWrapper(paths: PodmanPaths): string {
  return `#!/bin/sh
# Written by the test harness: runc with its state beside the podman service's instead of in /run/runc.
exec /usr/sbin/runc --root '${paths.runcRoot}' "$@"
`;
}

/** The default network: podman's usual bridge, with host-local's leases in the service's directory. */
export function renderCniConflist(paths: PodmanPaths): string {
  const conflist = {
    cniVersion: "0.4.0",
    name: podmanNetwork.cniNetwork,
    plugins: [
      {
        type: "bridge",
        bridge: podmanNetwork.bridge,
        isGateway: true,
        ipMasq: true,
        hairpinMode: true,
        ipam: {
          type: "host-local",
          dataDir: paths.ipamDir,
          routes: [{ dst: "0.0.0.0/0" }],
          ranges: [[{ subnet: podmanNetwork.subnet, gateway: podmanNetwork.gateway }]],
        },
      },
      { type: "portmap", capabilities: { portMappings: true } },
      { type: "firewall" },
      { type: "tuning" },
    ],
  };
  return `${JSON.stringify(conflist, null, 2)}\n`;
}

/** The environment podman reads its configuration from (never /etc/containers' files). */
export function podmanEnv(paths: PodmanPaths, registriesConf: string): Record<string, string> {
  return {
    CONTAINERS_CONF: paths.containersConf,
    CONTAINERS_STORAGE_CONF: paths.storageConf,
    CONTAINERS_REGISTRIES_CONF: registriesConf,
    TMPDIR: paths.tmp,
  };
}

/**
 * The service's command line: into the network namespace (nsenter, which keeps the host's /sys and its cgroup
 * mounts, unlike `ip netns exec`), a mount namespace of its own whose mounts never reach the host (slave
 * propagation), tmpfs over the fixed paths, then podman. Every step execs the next, so the PID is podman's.
 */
export function serviceCommand(paths: PodmanPaths): { command: string; args: string[] } {
  const mounts = privateMounts
    .map(({ path, mode }) => `mount -t tmpfs -o mode=${mode},size=64m remram-podman ${path}`)
    .join(" && ");
  return {
    command: "nsenter",
    args: [
      `--net=/run/netns/${podmanNetwork.namespace}`,
      "--",
      "unshare",
      "--mount",
      "--propagation",
      "slave",
      "--",
      "/bin/sh",
      "-ec",
      `${mounts} && exec podman system service --time=0 "unix://$0"`,
      paths.socket,
    ],
  };
}
