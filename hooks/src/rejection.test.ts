import { callerRefusedError } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { isRejection } from "./service.js";

const http = (status: number, body = "") => ({ kind: "http" as const, status, body });

describe("which Cortex refusals drop queued items", () => {
  it("drops items Cortex refuses for what they are, including a 403 about their household or scope", () => {
    expect(isRejection(http(400))).toBe(true);
    expect(isRejection(http(410))).toBe(true);
    expect(
      isRejection(http(403, '{"message":"householdId \\"x\\" is not this appliance\'s household"}')),
    ).toBe(true);
  });

  it("keeps items while the credential is wrong, throttled, timed out or Cortex is down", () => {
    expect(isRejection(http(401))).toBe(false);
    expect(
      isRejection(
        http(
          403,
          JSON.stringify({ error: callerRefusedError, message: "the gateway credential may not call" }),
        ),
      ),
    ).toBe(false);
    expect(isRejection(http(408))).toBe(false);
    expect(isRejection(http(429))).toBe(false);
    expect(isRejection(http(503))).toBe(false);
    expect(isRejection({ kind: "timeout" })).toBe(false);
  });
});
