/**
 * The operator's typed client for the Cortex endpoints it calls: /dimensions, /dream, /proposals, /promote.
 * Request shapes mirror cortex/src/schemas; responses are parsed with zod so a contract drift fails loudly here
 * instead of writing nonsense into status. Errors say whether Cortex was unreachable (retry with backoff) or
 * refused the request (a real answer, e.g. 409 for a stale base).
 */
import { z } from "zod";

export class CortexUnavailableError extends Error {
  override readonly name = "CortexUnavailableError";
}

export class CortexRejectedError extends Error {
  override readonly name = "CortexRejectedError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface CortexEndpoint {
  url: string;
  token: string;
}

export const putDimensionsResponse = z.object({ appliedHash: z.string(), updatedAt: z.string() });

export const dreamReport = z
  .object({
    runId: z.string().optional(),
    counts: z.record(z.string(), z.number()).default({}),
  })
  .loose();
export type DreamReport = z.infer<typeof dreamReport>;

export const pendingProposal = z
  .object({
    id: z.string().min(1).max(128),
    artifactPath: z.string().min(1).max(512),
    baseDigest: z.string().optional(),
    proposedDigest: z.string(),
    diff: z.string(),
    rationale: z.string(),
    sourceKnowledgeIds: z.array(z.string()).default([]),
  })
  .loose();
export type PendingProposal = z.infer<typeof pendingProposal>;

export const promoteResponse = z.object({ commitId: z.string() }).loose();

export interface DreamRequest {
  dryRun: boolean;
  maxProposals: number;
}

export class CortexClient {
  constructor(
    private readonly endpoint: CortexEndpoint,
    private readonly fetchImpl: typeof fetch = fetch,
    private readonly timeoutMs = 30_000,
  ) {}

  putDimensions(policy: unknown): Promise<z.infer<typeof putDimensionsResponse>> {
    return this.call("PUT", "/dimensions", policy, putDimensionsResponse);
  }

  /** The hash of the policy Cortex has in force (to notice a Cortex that lost or replaced it). */
  async currentHash(): Promise<string> {
    return (await this.call("GET", "/dimensions", undefined, z.object({ appliedHash: z.string() }).loose()))
      .appliedHash;
  }

  dream(request: DreamRequest): Promise<DreamReport> {
    return this.call("POST", "/dream", request, dreamReport, 600_000);
  }

  async pendingProposals(): Promise<PendingProposal[]> {
    const body = await this.call(
      "GET",
      "/proposals?status=pending",
      undefined,
      z.object({ proposals: z.array(pendingProposal) }),
    );
    return body.proposals;
  }

  /** Cortex answers 409 when the file moved on from `baseDigest` (stale base) or the content is not what was approved. */
  promote(
    proposalId: string,
    approvedBy: string,
    proposedDigest: string,
    baseDigest: string | undefined,
  ): Promise<z.infer<typeof promoteResponse>> {
    return this.call(
      "POST",
      "/promote",
      { proposalId, approvedBy, expectedDigest: proposedDigest, ...(baseDigest ? { baseDigest } : {}) },
      promoteResponse,
    );
  }

  async deny(proposalId: string, deniedBy: string, reason: string | undefined): Promise<void> {
    await this.call(
      "POST",
      `/proposals/${encodeURIComponent(proposalId)}/deny`,
      { deniedBy, ...(reason ? { reason } : {}) },
      z.unknown(),
    );
  }

  private async call<T extends z.ZodType>(
    method: string,
    path: string,
    body: unknown,
    schema: T,
    timeoutMs = this.timeoutMs,
  ): Promise<z.output<T>> {
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.endpoint.url}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${this.endpoint.token}`,
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new CortexUnavailableError(
        `${method} ${path}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const text = await response.text();
    if (response.status >= 500 || response.status === 429) {
      throw new CortexUnavailableError(`${method} ${path} answered ${response.status}`);
    }
    if (!response.ok) {
      let message = text.slice(0, 500);
      try {
        message = (JSON.parse(text) as { message?: string }).message ?? message;
      } catch {
        // not JSON: keep the raw text
      }
      throw new CortexRejectedError(
        response.status,
        `${method} ${path} answered ${response.status}: ${message}`,
      );
    }
    const parsed = schema.safeParse(text === "" ? undefined : JSON.parse(text));
    if (!parsed.success)
      throw new CortexRejectedError(502, `${method} ${path}: unexpected answer: ${parsed.error.message}`);
    return parsed.data;
  }
}
