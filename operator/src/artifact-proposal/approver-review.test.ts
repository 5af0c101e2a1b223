import { describe, expect, it } from "vitest";
import { approveAccessReview, impliedGroups } from "./approver-review.js";

describe("the approver's SubjectAccessReview", () => {
  it("asks what the admission policy's authorizer check asks: approve on this artifactproposal", () => {
    expect(approveAccessReview("alice", "home", "box-p-1")).toEqual({
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: "alice",
        groups: ["system:authenticated"],
        resourceAttributes: {
          group: "remram.io",
          resource: "artifactproposals",
          verb: "approve",
          namespace: "home",
          name: "box-p-1",
        },
      },
    });
  });

  it("gives a ServiceAccount the groups its name implies, and nobody a group the status could claim", () => {
    expect(impliedGroups("system:serviceaccount:home:approver-bot")).toEqual([
      "system:serviceaccounts",
      "system:serviceaccounts:home",
      "system:authenticated",
    ]);
    expect(impliedGroups("system:anonymous")).toEqual(["system:unauthenticated"]);
    expect(impliedGroups("mallory")).not.toContain("system:masters");
  });
});
