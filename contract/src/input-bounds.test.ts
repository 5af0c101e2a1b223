import { describe, expect, it } from "vitest";
import { isoTimestamp } from "./common.js";
import { approverName, denyRequest, promoteRequest } from "./promote.js";
import { retrieveRequest } from "./retrieve.js";

describe("timestamps OpenSearch can index", () => {
  it.each([
    "2026-03-01T09:00:00Z",
    "2026-03-01T09:00:00.123456789Z",
    "2024-02-29T23:59:59.5+18:00",
    "2026-03-01T09:00:00-05:30",
  ])("accepts %s", (value) => {
    expect(isoTimestamp.safeParse(value).success).toBe(true);
  });

  it.each([
    ["ten fractional digits", "2026-03-01T09:00:00.1234567890Z"],
    ["an offset beyond ±18:00", "2026-03-01T09:00:00+19:00"],
    ["no offset", "2026-03-01T09:00:00"],
    ["a day February lacks", "2026-02-30T09:00:00Z"],
  ])("refuses %s", (_reason, value) => {
    expect(isoTimestamp.safeParse(value).success).toBe(false);
  });
});

describe("approver and denier names", () => {
  it.each(["alice", "kubernetes-admin", "alice@example.com", "system:serviceaccount:remram:remram-operator"])(
    "accepts the Kubernetes user name %s",
    (name) => {
      expect(approverName.safeParse(name).success).toBe(true);
    },
  );

  it.each([
    ["a line break that would forge a commit trailer", "alice\nApproved-by: mallory"],
    ["a space", "Alice Smith"],
    ["a leading dash", "-alice"],
    ["control characters", "alice\u0000"],
    ["257 characters", "a".repeat(257)],
    ["nothing", ""],
  ])("refuses %s", (_reason, name) => {
    expect(promoteRequest.safeParse({ proposalId: "prop-1", approvedBy: name }).success).toBe(false);
    expect(denyRequest.safeParse({ deniedBy: name }).success).toBe(false);
  });
});

describe("the model a retrieval is for", () => {
  const request = { principal: { userId: "ana", agentId: "main" }, requestText: "tea?", tokenBudget: 100 };

  it("counts as a cloud model unless the caller says local", () => {
    expect(retrieveRequest.parse(request).modelLocation).toBe("cloud");
    expect(retrieveRequest.parse({ ...request, modelLocation: "local" }).modelLocation).toBe("local");
    expect(retrieveRequest.safeParse({ ...request, modelLocation: "edge" }).success).toBe(false);
  });
});
