import type { TestProject } from "vitest/node";
import { hostBaseline, hostChanges } from "./services/node/host.js";
import { nodeDir, nodeSysctlFile } from "./services/node/index.js";
import { podmanHostChanges } from "./services/podman/host.js";
import { podmanDir } from "./services/podman/index.js";
import { selectedServices, startTestbed, type TestbedEndpoints } from "./testbed.js";

declare module "vitest" {
  export interface ProvidedContext {
    testbed: TestbedEndpoints;
  }
}

/**
 * Integration tier: start the shared test bed once, hand endpoints to tests, stop everything by PID afterwards.
 * With the real node or the podman service, the stop is checked too: no process, mount, namespace, veth, cgroup,
 * path, kernel setting or host firewall rule of theirs may be left (a failed check fails the run).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const services = selectedServices();
  const withNode = services.includes("node");
  const withPodman = services.includes("podman");
  const baseline = withNode || withPodman ? await hostBaseline() : undefined;
  const testbed = await startTestbed();
  project.provide("testbed", testbed.endpoints);
  return async () => {
    await testbed.stop();
    if (baseline === undefined) return;
    const after = await hostBaseline();
    const left = new Set([
      ...(withNode ? await hostChanges(baseline, nodeDir, nodeSysctlFile) : []),
      ...(withPodman ? await podmanHostChanges(baseline, after, podmanDir) : []),
    ]);
    if (left.size > 0)
      throw new Error(`stopping the test bed left the host changed:\n  ${[...left].join("\n  ")}`);
  };
}
