// podman's Docker-compatible API for testcontainers: `podman system service` in a network namespace of its own
// (bridge, iptables rules and ip_forward stay there), containers in a store of its own, images read-only from the
// store `make images` fills. Requires root (namespaces, mounts, rootful podman).
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cacheDir, runDir } from "../../paths.js";
import { spawnService } from "../../process.js";
import { waitFor } from "../../wait.js";
import { abandonedBy } from "../host-footprint.js";
import type { PodmanEndpoints, Started, StartOptions } from "../types.js";
import { podmanRequest } from "./api.js";
import {
  podmanEnv,
  podmanNetwork,
  podmanPaths,
  renderCniConflist,
  renderContainersConf,
  renderRuncWrapper,
  renderStorageConf,
  serviceCommand,
} from "./config.js";
import { createPodmanNetwork, namespaceExists, namespaceOwner, ownedBy, teardownPodman } from "./host.js";

/** The service's state for one run (configuration, its containers' store, the socket); teardown removes it. */
export const podmanDir = join(runDir, "podman");
/** What hack/install-images.sh (`make images`) writes: its image store and its registries.conf. */
const imagesDir = join(cacheDir, "containers");
const imageStore = join(imagesDir, "storage");
const registriesConf = join(imagesDir, "registries.conf");
const imagesHint = "run `make images` (hack/install-images.sh installs podman and builds the images)";
/** sun_path holds 108 bytes with its terminating NUL. */
const maxSocketPath = 107;

/** Stop early, naming the cause and the fix, for everything a start on this host would trip over. */
function checkPodmanHost(dir: string): void {
  if (process.getuid?.() !== 0) {
    throw new Error(
      "the podman service needs root (network and mount namespaces, rootful podman); run as root or drop `podman` from REMRAM_TESTBED",
    );
  }
  const commands: Record<string, string> = {
    "/usr/bin/podman": imagesHint,
    "/usr/sbin/runc": imagesHint,
    "/usr/lib/cni/bridge": imagesHint,
    "/usr/bin/nsenter": "apt-get install util-linux",
    "/usr/bin/unshare": "apt-get install util-linux",
  };
  for (const [path, fix] of Object.entries(commands)) {
    if (!existsSync(path)) throw new Error(`${path} is missing: ${fix}`);
  }
  if (!existsSync(imageStore) || !existsSync(registriesConf)) {
    throw new Error(`the image store ${imageStore} is missing: ${imagesHint}`);
  }
  const socket = podmanPaths(dir).socket;
  if (socket.length > maxSocketPath) {
    throw new Error(
      `the socket path ${socket} is longer than a unix socket allows: use a shorter checkout path`,
    );
  }
}

function writeConfiguration(dir: string): void {
  const paths = podmanPaths(dir);
  for (const path of [paths.cniConfigDir, paths.ipamDir, paths.runcRoot, paths.tmp, paths.libpodTmp]) {
    mkdirSync(path, { recursive: true });
  }
  writeFileSync(paths.containersConf, renderContainersConf(paths));
  writeFileSync(paths.storageConf, renderStorageConf(paths, imageStore));
  writeFileSync(join(paths.cniConfigDir, `${podmanNetwork.cniNetwork}.conflist`), renderCniConflist(paths));
  writeFileSync(paths.runcWrapper, renderRuncWrapper(paths));
  chmodSync(paths.runcWrapper, 0o755);
}

/** Start the service and resolve once its API answers; a failed start removes everything it made. */
export async function startPodman(options: StartOptions = {}): Promise<Started<PodmanEndpoints>> {
  const dir = podmanDir;
  checkPodmanHost(dir);
  // Another checkout's service killed before its teardown: nothing of it runs, so its leftovers go.
  const abandoned = await abandonedBy(podmanNetwork.namespace, podmanNetwork.hostVeth, dir);
  if (abandoned !== undefined) {
    console.warn(
      `[testbed] removing the abandoned podman service of ${abandoned} (no process left in its namespace)`,
    );
    await teardownPodman(abandoned);
  }
  // Another checkout's live service: starting would tear it down.
  if (namespaceExists() && !ownedBy(dir)) {
    throw new Error(
      `network namespace ${podmanNetwork.namespace} belongs to ${namespaceOwner() ?? "another run"}: stop that podman service there (make infra-down), or \`ip netns delete ${podmanNetwork.namespace}\``,
    );
  }
  // A crashed run of this checkout leaves its namespace, processes and store: take them away first.
  await teardownPodman(dir);
  const paths = podmanPaths(dir);
  const { command, args } = serviceCommand(paths);
  let service: ReturnType<typeof spawnService> | undefined;
  const stop = async (): Promise<void> => {
    const left = await teardownPodman(dir);
    await service?.stop(1_000);
    if (left.length > 0) throw new Error(`the podman service left behind:\n  ${left.join("\n  ")}`);
  };
  try {
    writeConfiguration(dir);
    await createPodmanNetwork(dir);
    service = spawnService({
      name: "podman",
      command,
      args,
      env: { ...process.env, ...podmanEnv(paths, registriesConf) },
      detach: options.detach,
    });
    const started = service;
    await waitFor(
      async () => {
        if (!existsSync(paths.socket)) return undefined;
        const ping = await podmanRequest(paths.socket, "GET", "/_ping", 5_000);
        return ping.status === 200 ? true : undefined;
      },
      {
        what: "the podman service's API",
        timeoutMs: options.timeoutMs ?? 60_000,
        intervalMs: 100,
        abortIf: () =>
          started.exitReason() &&
          `podman ${started.exitReason()}\n--- ${started.logFile} (tail) ---\n${started.logTail(20)}`,
      },
    );
    return {
      endpoints: {
        socket: paths.socket,
        dockerHost: `unix://${paths.socket}`,
        host: podmanNetwork.serviceIp,
        namespace: podmanNetwork.namespace,
        network: podmanNetwork.cniNetwork,
      },
      processes: [service],
      stop,
    };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}
