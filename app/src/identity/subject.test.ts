import { describe, expect, it } from "vitest";
import { AppError } from "../errors.js";
import { subject } from "./subject.js";

describe("subject", () => {
  it("is the member themself when no other member is named", () => {
    expect(subject({ memberId: "alice", admin: false }, undefined)).toEqual({
      userId: "alice",
      asAdmin: false,
    });
    expect(subject({ memberId: "alice", admin: true }, "alice")).toEqual({ userId: "alice", asAdmin: false });
  });

  it("is another member only for an admin, who then acts as one; anyone else gets a 403", () => {
    expect(subject({ memberId: "bob", admin: true }, "alice")).toEqual({ userId: "alice", asAdmin: true });
    const refusal = () => subject({ memberId: "alice", admin: false }, "bob");
    expect(refusal).toThrow(AppError);
    expect(refusal).toThrow(/only a household admin sees or changes another member's knowledge/);
  });
});
