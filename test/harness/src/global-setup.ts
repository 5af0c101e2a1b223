import type { TestProject } from "vitest/node";
import { hostBaseline, hostChanges } from "./services/node/host.js";
import { nodeDir, nodeSysctlFile } from "./services/node/index.js";
import { selectedServices, startTestbed, type TestbedEndpoints } from "./testbed.js";

declare module "vitest" {
  export interface ProvidedContext {
    testbed: TestbedEndpoints;
  }
}

/**
 * Integration tier: start the shared test bed once, hand endpoints to tests, stop everything by PID afterwards.
 * With the real node, the stop is checked too: no process, mount, namespace, veth, cgroup, path, kernel setting or
 * host firewall rule of the node may be left (a failed check fails the run).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const withNode = selectedServices().includes("node");
  const baseline = withNode ? await hostBaseline() : undefined;
  const testbed = await startTestbed();
  project.provide("testbed", testbed.endpoints);
  return async () => {
    await testbed.stop();
    if (baseline === undefined) return;
    const left = await hostChanges(baseline, nodeDir, nodeSysctlFile);
    if (left.length > 0)
      throw new Error(`stopping the real node left the host changed:\n  ${left.join("\n  ")}`);
  };
}
