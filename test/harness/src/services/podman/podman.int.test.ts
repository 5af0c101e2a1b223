import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { Wait } from "testcontainers";
import { describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../inject.js";
import { listContainerIds } from "./api.js";
import { podmanNetwork } from "./config.js";
import { localContainer, localImages } from "./testcontainers.js";

const run = promisify(execFile);
const podman = testbedEndpoints("podman");

/** A one-line HTTP server on the Node base image: starts in a fraction of a second. */
const helloServer = [
  "node",
  "-e",
  "require('node:http').createServer((request, response) => response.end('hello from ' + require('node:os').hostname())).listen(8080)",
];

const inNamespace = async (args: string[]): Promise<string> =>
  (await run("nsenter", [`--net=/run/netns/${podman.namespace}`, "--", ...args])).stdout;
const hostLinks = async (): Promise<string> => (await run("ip", ["-o", "link", "show"])).stdout;

describe("podman's Docker-compatible API in a network namespace of its own", () => {
  it("runs a locally built image through testcontainers, reachable on the namespace's address", async () => {
    const started = Date.now();
    const container = await (await localContainer(podman, localImages.node()))
      .withCommand(helloServer)
      .withExposedPorts(8080)
      .withWaitStrategy(Wait.forHttp("/", 8080))
      .start();
    const startMs = Date.now() - started;
    try {
      expect(container.getHost()).toBe(podman.host);
      const answer = await fetch(`http://${container.getHost()}:${container.getMappedPort(8080)}/`);
      expect(await answer.text()).toBe(`hello from ${container.getId().slice(0, 12)}`);
      expect(await listContainerIds(podman.socket)).toContain(container.getId());
      console.log(`node container started and answered in ${startMs} ms`);
    } finally {
      await container.stop();
    }
    expect(await listContainerIds(podman.socket)).not.toContain(container.getId());
  });

  it("keeps the bridge, its iptables rules and ip_forward inside the namespace", async () => {
    const hostForwarding = readFileSync("/proc/sys/net/ipv4/ip_forward", "utf8").trim();
    const container = await (await localContainer(podman, localImages.node()))
      .withCommand(helloServer)
      .withExposedPorts(8080)
      .start();
    try {
      expect(await inNamespace(["ip", "-o", "link", "show", podmanNetwork.bridge])).toContain(
        podmanNetwork.bridge,
      );
      expect(await inNamespace(["iptables-save"])).toMatch(/^:CNI-HOSTPORT-DNAT/m);
      expect((await inNamespace(["cat", "/proc/sys/net/ipv4/ip_forward"])).trim()).toBe("1");
      expect(await hostLinks()).not.toContain(podmanNetwork.bridge);
      expect((await run("iptables-save", [])).stdout).not.toMatch(/^:CNI-/m);
      expect(readFileSync("/proc/sys/net/ipv4/ip_forward", "utf8").trim()).toBe(hostForwarding);
    } finally {
      await container.stop();
    }
  });

  it("names `make images` when an image was not built, instead of pulling", async () => {
    await expect(localContainer(podman, "localhost/remram/not-built:0.0.0")).rejects.toThrow(
      /localhost\/remram\/not-built:0\.0\.0 has not been built: run `make images`/,
    );
  });
});
