import { describe, expect, it } from "vitest";
import { nodeNetwork } from "../node/config.js";
import {
  podmanEnv,
  podmanNetwork,
  podmanPaths,
  privateMounts,
  renderCniConflist,
  renderContainersConf,
  renderRuncWrapper,
  renderStorageConf,
  serviceCommand,
} from "./config.js";

const paths = podmanPaths("/state/podman");
const quotedPaths = (text: string): string[] =>
  [...text.matchAll(/"(\/[^"]*)"/g)].map((match) => match[1] ?? "");

describe("the podman service's configuration", () => {
  it("keeps libpod's database, volumes, events, scratch space and the runtime in the service's directory", () => {
    const conf = renderContainersConf(paths);
    expect(quotedPaths(conf).filter((path) => !path.startsWith("/state/podman/"))).toEqual(["/usr/lib/cni"]);
    expect(conf).toContain('runc = ["/state/podman/runc"]');
    expect(conf).toContain('default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]');
    expect(conf).toContain(`default_network = "${podmanNetwork.cniNetwork}"`);
  });

  it("stores containers in its own directory and reads images from the cache's store", () => {
    const conf = renderStorageConf(paths, "/cache/containers/storage");
    expect(conf).toContain('graphroot = "/state/podman/storage"');
    expect(conf).toContain('runroot = "/state/podman/run"');
    expect(conf).toContain('additionalimagestores = ["/cache/containers/storage"]');
  });

  it("gives runc a state root of its own instead of /run/runc", () => {
    expect(renderRuncWrapper(paths)).toContain(
      "exec /usr/sbin/runc --root '/state/podman/runc-state' \"$@\"",
    );
  });

  it("names the default network as containers.conf does and keeps its leases in the directory", () => {
    const conflist = JSON.parse(renderCniConflist(paths));
    expect(conflist.name).toBe(podmanNetwork.cniNetwork);
    expect(conflist.plugins[0]).toMatchObject({
      type: "bridge",
      bridge: podmanNetwork.bridge,
      isGateway: true,
    });
    expect(conflist.plugins[0].ipam.dataDir).toBe("/state/podman/ipam");
    expect(conflist.plugins.map((plugin: { type: string }) => plugin.type)).toContain("portmap");
  });

  it("reads its configuration from the environment, never from /etc/containers", () => {
    expect(podmanEnv(paths, "/cache/containers/registries.conf")).toEqual({
      CONTAINERS_CONF: "/state/podman/containers.conf",
      CONTAINERS_STORAGE_CONF: "/state/podman/storage.conf",
      CONTAINERS_REGISTRIES_CONF: "/cache/containers/registries.conf",
      TMPDIR: "/state/podman/tmp",
    });
  });
});

describe("where the podman service runs", () => {
  it("enters its network namespace, then a mount namespace whose mounts stay off the host, then podman", () => {
    const { command, args } = serviceCommand(paths);
    expect([command, ...args.slice(0, 8)]).toEqual([
      "nsenter",
      `--net=/run/netns/${podmanNetwork.namespace}`,
      "--",
      "unshare",
      "--mount",
      "--propagation",
      "slave",
      "--",
      "/bin/sh",
    ]);
    const script = args.at(-2) ?? "";
    for (const { path } of privateMounts) expect(script).toContain(` remram-podman ${path} `);
    expect(script).toMatch(/&& exec podman system service --time=0 "unix:\/\/\$0"$/);
    expect(args.at(-1)).toBe("/state/podman/podman.sock");
  });

  it("gives the fixed paths podman writes a tmpfs of its own", () => {
    expect(privateMounts.map((mount) => mount.path)).toEqual(["/run/netns", "/var/lib", "/var/tmp"]);
  });

  it("uses a /30 of its own beside the real node's, and interface names the kernel accepts", () => {
    expect(podmanNetwork.hostIp).not.toBe(nodeNetwork.hostIp);
    expect(podmanNetwork.serviceIp.split(".").slice(0, 3)).not.toEqual(
      nodeNetwork.nodeIp.split(".").slice(0, 3),
    );
    expect(podmanNetwork.namespace).not.toBe(nodeNetwork.namespace);
    for (const name of [podmanNetwork.hostVeth, podmanNetwork.bridge])
      expect(name.length).toBeLessThanOrEqual(15);
  });
});
