import { describe, expect, it } from "vitest";
import { applianceOfMember } from "./app-address.js";

describe("applianceOfMember", () => {
  it("reads the appliance from a member's ServiceAccount, <appliance>-member-<id>, in the namespace", () => {
    expect(applianceOfMember("system:serviceaccount:home:box-member-alice", "home")).toBe("box");
    expect(applianceOfMember("system:serviceaccount:home:my-box-member-anne-marie", "home")).toBe("my-box");
  });

  it("knows no appliance for anyone else", () => {
    expect(applianceOfMember("system:serviceaccount:other:box-member-alice", "home")).toBeUndefined();
    expect(applianceOfMember("system:serviceaccount:home:box-app", "home")).toBeUndefined();
    expect(applianceOfMember("kubernetes-admin", "home")).toBeUndefined();
    expect(applianceOfMember("system:serviceaccount:home:box-member-", "home")).toBeUndefined();
  });
});
