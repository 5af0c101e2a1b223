import { inject } from "vitest";
import type { TestbedEndpoints } from "./testbed.js";

/** The endpoints of one test-bed service inside an integration test; a clear error if it was not started. */
export function testbedEndpoints<K extends keyof TestbedEndpoints>(
  name: K,
): NonNullable<TestbedEndpoints[K]> {
  const endpoints = inject("testbed")[name];
  if (endpoints === undefined) {
    throw new Error(
      `this suite needs the ${name} test-bed service; it was not started (check REMRAM_TESTBED)`,
    );
  }
  return endpoints;
}
