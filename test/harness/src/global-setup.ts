import type { TestProject } from "vitest/node";
import { startTestbed, type TestbedEndpoints } from "./testbed.js";

declare module "vitest" {
  export interface ProvidedContext {
    testbed: TestbedEndpoints;
  }
}

/** Integration tier: start the shared test bed once, hand endpoints to tests, stop everything by PID afterwards. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const testbed = await startTestbed();
  project.provide("testbed", testbed.endpoints);
  return () => testbed.stop();
}
