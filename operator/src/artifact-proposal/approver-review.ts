/**
 * The operator's own check, before it acts on a decision, that the recorded decider holds the `approve` verb: a
 * SubjectAccessReview on the same attributes the admission policy's authorizer check uses. Admission is the first
 * line; this one holds when the policy is missing or edited and status is open to whoever may patch it.
 *
 * The review names the user and only the groups its name implies. Recorded groups would be written by the same
 * unchecked patch, so a forger could list system:masters; not recording them means an approver whose verb comes
 * from a group binding alone (an IdP group) is refused here: bind remram-approver to users or ServiceAccounts.
 */
import { group } from "../api/v1alpha1/common.js";
import type { KubeClient } from "../runtime/kube-client.js";

export const approveVerb = "approve";
export const subjectAccessReviewsPath = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

/** The groups the API server gives every request of `username`, derived from the name alone. */
export function impliedGroups(username: string): string[] {
  if (username === "system:anonymous") return ["system:unauthenticated"];
  const serviceAccount = /^system:serviceaccount:([^:]+):[^:]+$/.exec(username);
  if (serviceAccount !== null)
    return ["system:serviceaccounts", `system:serviceaccounts:${serviceAccount[1]}`, "system:authenticated"];
  return ["system:authenticated"];
}

/** May `username` approve ArtifactProposal `name` in `namespace`? As authorizer…check('approve') asks it. */
export function approveAccessReview(
  username: string,
  namespace: string,
  name: string,
): Record<string, unknown> {
  return {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    spec: {
      user: username,
      groups: impliedGroups(username),
      resourceAttributes: { group, resource: "artifactproposals", verb: approveVerb, namespace, name },
    },
  };
}

interface ReviewStatus {
  status?: { allowed?: boolean; reason?: string; evaluationError?: string };
}

/**
 * undefined when the decider may decide, else why not. A failed request (no RBAC to create reviews, API server
 * away) throws: the decision is neither trusted nor refused, and the caller retries.
 */
export async function approverRefusal(
  client: KubeClient,
  username: string,
  namespace: string,
  name: string,
): Promise<string | undefined> {
  const review = await client.create<ReviewStatus>(
    subjectAccessReviewsPath,
    approveAccessReview(username, namespace, name),
  );
  if (review?.status?.allowed === true) return undefined;
  const why = review?.status?.reason || review?.status?.evaluationError;
  return `${username} does not hold the approve verb on artifactproposals in ${namespace}${why ? ` (${why})` : ""}; the decision is not acted on`;
}
