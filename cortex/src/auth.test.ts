import { describe, expect, it } from "vitest";
import { bearerOf, CallerCredentials, type CallerTokens } from "./auth.js";

const gatewayToken = "gateway-token-0123456789";
const operatorToken = "operator-token-0123456789";

function credentialsWith(initial: CallerTokens, overlapMs = 60_000) {
  let tokens = initial;
  let now = 1_000_000;
  const rotated: string[] = [];
  const credentials = new CallerCredentials({
    read: () => tokens,
    overlapMs,
    clock: () => now,
    onRotated: (caller) => rotated.push(caller),
  });
  return {
    credentials,
    rotated,
    set(next: CallerTokens) {
      tokens = next;
      credentials.refresh();
    },
    advance(ms: number) {
      now += ms;
    },
  };
}

describe("bearer header", () => {
  it("takes the value of a Bearer header only", () => {
    expect(bearerOf("Bearer abc")).toBe("abc");
    expect(bearerOf("bearer  abc ")).toBe("abc");
    expect(bearerOf("Basic abc")).toBeUndefined();
    expect(bearerOf("Bearer a b")).toBeUndefined();
    expect(bearerOf(undefined)).toBeUndefined();
  });
});

describe("caller credentials", () => {
  it("names the caller whose credential is presented, and no one for anything else", () => {
    const { credentials } = credentialsWith({ gateway: gatewayToken, operator: operatorToken });
    expect(credentials.identify(gatewayToken)).toBe("gateway");
    expect(credentials.identify(operatorToken)).toBe("operator");
    expect(credentials.identify(`${gatewayToken}x`)).toBeUndefined();
    expect(credentials.identify(gatewayToken.slice(0, -1))).toBeUndefined();
    expect(credentials.identify(undefined)).toBeUndefined();
    expect(credentials.callers().sort()).toEqual(["gateway", "operator"]);
  });

  it("accepts a replaced credential during the overlap window, then refuses it", () => {
    const bed = credentialsWith({ gateway: gatewayToken }, 60_000);
    bed.set({ gateway: "gateway-token-rotated-000" });
    expect(bed.rotated).toEqual(["gateway"]);
    expect(bed.credentials.identify(gatewayToken)).toBe("gateway");
    expect(bed.credentials.identify("gateway-token-rotated-000")).toBe("gateway");
    bed.advance(60_000);
    expect(bed.credentials.identify(gatewayToken)).toBeUndefined();
    expect(bed.credentials.identify("gateway-token-rotated-000")).toBe("gateway");
  });

  it("refuses the replaced credential as soon as its caller presents the new one", () => {
    const bed = credentialsWith({ gateway: gatewayToken }, 600_000);
    bed.set({ gateway: "gateway-token-rotated-000" });
    expect(bed.credentials.identify("gateway-token-rotated-000")).toBe("gateway");
    expect(bed.credentials.identify(gatewayToken)).toBeUndefined();
  });

  it("an unchanged re-read keeps one credential, and a removed caller is refused at once", () => {
    const bed = credentialsWith({ gateway: gatewayToken, operator: operatorToken });
    bed.set({ gateway: gatewayToken, operator: operatorToken });
    expect(bed.rotated).toEqual([]);
    bed.set({ gateway: gatewayToken });
    expect(bed.credentials.identify(operatorToken)).toBeUndefined();
    expect(bed.credentials.identify(gatewayToken)).toBe("gateway");
  });

  it("a second rotation inside the window keeps both earlier values until their windows end", () => {
    const bed = credentialsWith({ gateway: "gateway-token-first-0000" }, 60_000);
    bed.set({ gateway: "gateway-token-second-000" });
    bed.advance(30_000);
    bed.set({ gateway: "gateway-token-third-0000" });
    expect(bed.credentials.identify("gateway-token-first-0000")).toBe("gateway");
    bed.advance(30_000);
    expect(bed.credentials.identify("gateway-token-first-0000")).toBeUndefined();
    expect(bed.credentials.identify("gateway-token-second-000")).toBe("gateway");
  });

  it("names no one for a value two callers accept: one's old credential rotated into another's", () => {
    const bed = credentialsWith({ gateway: gatewayToken, admin: "admin-token-0123456789" }, 60_000);
    bed.set({ gateway: "admin-token-0123456789", admin: "admin-token-rotated-0000" });
    expect(bed.credentials.identify("admin-token-0123456789")).toBeUndefined();
    expect(bed.credentials.identify("admin-token-rotated-0000")).toBe("admin");
  });
});
