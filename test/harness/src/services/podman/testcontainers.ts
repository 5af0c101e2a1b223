// testcontainers on the test bed's podman service, for integration suites: its environment, the images `make images`
// builds, and containers that never pull.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { GenericContainer, PullPolicy } from "testcontainers";
import { repoRoot } from "../../paths.js";
import { pinned } from "../../versions.js";
import type { PodmanEndpoints } from "../types.js";
import { imageExposedPorts } from "./api.js";

const packageVersion = (workspace: string): string =>
  (JSON.parse(readFileSync(join(repoRoot, workspace, "package.json"), "utf8")) as { version: string })
    .version;

/** The locally built images (hack/install-images.sh), under the versions the repository pins. */
export const localImages = {
  opensearch: () => `localhost/remram/opensearch:${pinned("OPENSEARCH_VERSION")}`,
  cortex: () => `localhost/remram/cortex:${packageVersion("cortex")}`,
  /** The Node base of the app images: a small server in one line, for checks of the service itself. */
  node: () => `localhost/remram-node:${pinned("NODE_VERSION")}`,
} as const;

/**
 * Point testcontainers at the service. It reads these once, on its first use in a process (a vitest worker), so
 * this runs before any container is made:
 * - DOCKER_HOST: the service's socket (testcontainers finds no runtime otherwise);
 * - TESTCONTAINERS_RYUK_DISABLED: Ryuk's image cannot be pulled here; the harness removes every container instead;
 * - TESTCONTAINERS_HOST_OVERRIDE: published ports are on the namespace's address (this VM has a /.dockerenv, so
 *   testcontainers would otherwise look for a bridge gateway).
 */
function useTestbedPodman(endpoints: PodmanEndpoints): void {
  process.env.DOCKER_HOST = endpoints.dockerHost;
  process.env.TESTCONTAINERS_RYUK_DISABLED = "true";
  process.env.TESTCONTAINERS_HOST_OVERRIDE = endpoints.host;
}

const isPortSpec = (port: string): port is `${number}/${"tcp" | "udp"}` => /^\d+\/(tcp|udp)$/.test(port);

/**
 * A container of a locally built image on the service; a missing image is a clear error instead of a pull. Every
 * port the image declares is published: podman 4.3 lists each one in the container's PortBindings (unpublished ones
 * as null) and testcontainers waits until all of them are bound.
 */
export async function localContainer(endpoints: PodmanEndpoints, image: string): Promise<GenericContainer> {
  useTestbedPodman(endpoints);
  const declared = await imageExposedPorts(endpoints.socket, image);
  if (declared === undefined) throw new Error(`the image ${image} has not been built: run \`make images\``);
  return new GenericContainer(image)
    .withPullPolicy(PullPolicy.neverPull())
    .withExposedPorts(...declared.filter(isPortSpec));
}
