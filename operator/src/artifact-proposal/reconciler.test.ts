import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { ArtifactProposalStatus } from "../api/v1alpha1/artifact-proposal.js";
import type { CortexDirectory } from "../cortex/directory.js";
import type { EventInput, EventRecorder } from "../runtime/events.js";
import { KubeApiError, type KubeClient, type KubeObject } from "../runtime/kube-client.js";
import { subjectAccessReviewsPath } from "./approver-review.js";
import { type ArtifactProposalObject, ArtifactProposalReconciler } from "./reconciler.js";

const digest = `sha256:${"a".repeat(64)}`;
const at = "2026-01-01T00:00:00Z";
const operator = "system:serviceaccount:remram-system:remram-operator";

/** A proposal approved by `by`, and an API server whose SubjectAccessReviews answer `review`. */
function approvedBy(by: string, review: () => Promise<unknown>) {
  const proposal: ArtifactProposalObject = {
    apiVersion: "remram.io/v1alpha1",
    kind: "ArtifactProposal",
    metadata: { name: "box-p-1", namespace: "home", generation: 1 },
    spec: {
      applianceRef: { name: "box" },
      proposalId: "p-1",
      artifactPath: "notes/house.md",
      proposedDigest: digest,
      diff: "+x",
      rationale: "r",
      proposedBy: operator,
    },
    status: {
      phase: "Pending",
      conditions: [
        { type: "Approved", status: "True", reason: "KubectlRemram", message: "", lastTransitionTime: at },
      ],
      approval: { decision: "Approved", by, at, generation: 1, proposedDigest: digest },
    },
  };
  const reviews: unknown[] = [];
  const statuses: ArtifactProposalStatus[] = [];
  const promotions: string[] = [];
  const events: EventInput[] = [];
  const client = {
    create: async (path: string, body: unknown) => {
      expect(path).toBe(subjectAccessReviewsPath);
      reviews.push(body);
      return review();
    },
    applyStatus: async (object: KubeObject & { status: ArtifactProposalStatus }) => {
      statuses.push(object.status);
    },
  } as unknown as KubeClient;
  const cortex = {
    clientFor: async () => ({
      promote: async (_id: string, approver: string) => {
        promotions.push(approver);
        return { commitId: "abcdef1234567" };
      },
    }),
  } as unknown as CortexDirectory;
  const reconciler = new ArtifactProposalReconciler({
    client,
    proposals: { get: () => proposal, list: () => [proposal] },
    cortex,
    events: {
      record: async (_object: KubeObject, event: EventInput) => void events.push(event),
    } as EventRecorder,
    now: () => Date.parse(at),
    log: pino({ level: "silent" }),
  });
  return { reconciler, reviews, statuses, promotions, events };
}

const ready = (status: ArtifactProposalStatus | undefined) =>
  status?.conditions?.find((condition) => condition.type === "Ready");

describe("the operator's own check of who approved", () => {
  it("promotes when the SubjectAccessReview allows the approver", async () => {
    const run = approvedBy("alice", async () => ({ status: { allowed: true } }));
    await run.reconciler.reconcile("home/box-p-1");
    expect(run.reviews).toHaveLength(1);
    expect(run.promotions).toEqual(["alice"]);
    expect(run.statuses[0]?.phase).toBe("Promoted");
  });

  it("refuses, final and without calling Cortex, an approver the review does not allow", async () => {
    const run = approvedBy("bob", async () => ({
      status: { allowed: false, reason: "no RBAC policy matched" },
    }));
    await run.reconciler.reconcile("home/box-p-1");
    expect(run.promotions).toEqual([]);
    expect(run.statuses[0]?.phase).toBe("Failed");
    expect(ready(run.statuses[0])).toMatchObject({ reason: "ApproverNotAuthorized" });
    expect(ready(run.statuses[0])?.message).toContain("bob does not hold the approve verb");
    expect(run.events).toEqual([
      expect.objectContaining({ type: "Warning", reason: "ApproverNotAuthorized", action: "Promote" }),
    ]);
  });

  it("refuses the proposer without asking the API server", async () => {
    const run = approvedBy(operator, async () => ({ status: { allowed: true } }));
    await run.reconciler.reconcile("home/box-p-1");
    expect(run.reviews).toEqual([]);
    expect(run.promotions).toEqual([]);
    expect(ready(run.statuses[0])).toMatchObject({ reason: "ApproverIsProposer" });
    expect(run.events[0]?.reason).toBe("ApproverIsProposer");
  });

  it("acts on nothing and retries while the review cannot be made", async () => {
    const forbidden = new KubeApiError(403, "Forbidden", "cannot create subjectaccessreviews");
    const run = approvedBy("alice", async () => {
      throw forbidden;
    });
    await expect(run.reconciler.reconcile("home/box-p-1")).rejects.toBe(forbidden);
    expect(run.promotions).toEqual([]);
    expect(run.statuses[0]?.phase).toBe("Pending");
    expect(ready(run.statuses[0])).toMatchObject({ reason: "ApprovalUnverified" });
  });
});
