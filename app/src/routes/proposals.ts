/**
 * Artifact proposals, reviewed as the person: listed, approved and denied with the person's own Kubernetes
 * credential through the /status subresource, exactly as `kubectl remram approve` does. The appliance's admission
 * policy and the operator's re-check therefore judge the person; the app holds no right to approve anything.
 */
import { decisionBlocker, decisionPatch, type ProposalView } from "@remram/operator/approval";
import { KubeApiError } from "@remram/operator/kube-client";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { AppError } from "../errors.js";
import type { Person } from "../identity/identify.js";

interface ProposalObject extends ProposalView {
  metadata: ProposalView["metadata"] & { creationTimestamp?: string };
  spec: ProposalView["spec"] & { applianceRef: { name: string } };
}

/** Kubernetes' refusal as the person's: RBAC and the admission policy name what is missing; `hint` says how to get it. */
function asAppError(error: unknown, doing: string, hint = ""): never {
  if (error instanceof KubeApiError) {
    if (error.status === 403) throw new AppError(403, `${doing}: ${error.message}${hint}`);
    const status = error.status === 404 ? 404 : error.status === 422 || error.status === 409 ? 409 : 503;
    throw new AppError(status, `${doing}: ${error.message}`);
  }
  throw new AppError(503, `${doing}: Kubernetes did not answer: ${(error as Error).message}`);
}

function view(proposal: ProposalObject, person: Person) {
  const { metadata, spec, status } = proposal;
  return {
    name: metadata.name,
    createdAt: metadata.creationTimestamp,
    artifactPath: spec.artifactPath,
    rationale: spec.rationale,
    diff: spec.diff,
    proposedBy: spec.proposedBy,
    phase: status?.phase ?? "Pending",
    approval: status?.approval,
    /** The commit an approved proposal became, once the operator promoted it. */
    promotion: status?.promotion,
    /** Why the person cannot decide it now (undefined: they may try; Kubernetes has the last word). */
    blocker: decisionBlocker(proposal, person.username),
  };
}

const nowIso = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

export const proposalRoutes: FastifyPluginAsyncZod = async (app) => {
  const { namespace, appliance } = app.remram.config;
  const collection = `/apis/remram.io/v1alpha1/namespaces/${namespace}/artifactproposals`;

  app.get("/api/proposals", async (request) => {
    const list = await request.person.kube
      .send<{ items: ProposalObject[] }>("GET", collection)
      .catch((error: unknown) =>
        asAppError(error, `listing artifact proposals as ${request.person.username}`),
      );
    const proposals = list.items
      .filter((item) => item.spec.applianceRef.name === appliance)
      .sort((a, b) => (b.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? ""))
      .map((item) => view(item, request.person));
    return { proposals };
  });

  app.post(
    "/api/proposals/:name/:decision",
    {
      schema: {
        params: z.object({ name: z.string().min(1).max(253), decision: z.enum(["approve", "deny"]) }),
        body: z.object({ comment: z.string().max(1024).optional() }).strict(),
      },
    },
    async (request) => {
      const { person } = request;
      const { name } = request.params;
      const decision = request.params.decision === "approve" ? "Approved" : "Denied";
      const path = `${collection}/${encodeURIComponent(name)}`;
      const proposal = await person.kube
        .send<ProposalObject>("GET", path)
        .catch((error: unknown) =>
          asAppError(error, `reading artifactproposal ${name} as ${person.username}`),
        );
      if (proposal.spec.applianceRef.name !== appliance)
        throw new AppError(404, `artifactproposal ${name} is not a proposal of appliance ${appliance}`);
      const blocker = decisionBlocker(proposal, person.username);
      if (blocker !== undefined) throw new AppError(409, blocker);
      const patch = decisionPatch(
        proposal,
        decision,
        person.username,
        nowIso(),
        request.body.comment,
        "remram-app",
      );
      const decided = await person.kube
        .jsonPatch<ProposalObject>(`${path}/status`, patch)
        .catch((error: unknown) =>
          asAppError(
            error,
            `${request.params.decision} ${name} as ${person.username}`,
            ` (deciding needs the remram-approver role: kubectl remram user add ${person.memberId} --approver)`,
          ),
        );
      request.log.info({ member: person.memberId, proposal: name, decision }, "proposal decided");
      return view(decided, person);
    },
  );
};
