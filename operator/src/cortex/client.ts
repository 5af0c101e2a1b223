/**
 * The operator's typed client for the Cortex endpoints it calls: /dimensions, /dream, /proposals, /promote,
 * /admin/check, /admin/embeddings, /admin/migrations, /admin/storage, /admin/backups and /admin/restore.
 * Requests and responses are Cortex's own schemas (@remram/contract): a request the contract no longer takes
 * fails the operator's build, and an answer is parsed so a drift at run time fails loudly here instead of writing
 * nonsense into status. Errors say whether Cortex was unreachable (retry with backoff) or refused the request (a
 * real answer, e.g. 409 for a stale base).
 */
import {
  type BackupRequest,
  type BackupStarted,
  type BackupsResponse,
  backupStarted,
  backupsResponse,
  type ConsistencyReport,
  consistencyReport,
  type DenyRequestInput,
  type DimensionPolicyInput,
  type DreamRequestInput,
  dimensionsResponse,
  dreamReportSchema,
  type EmbeddingStatus,
  embeddingStatus,
  type MigrationStatus,
  migrationStatus,
  type PromoteRequestInput,
  promoteResponse,
  proposalSchema,
  putDimensionsResponse,
  type RestoreStatus,
  restoreStatus,
  routes,
  type StorageStatus,
  storageStatus,
} from "@remram/contract";
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

/** What the operator reads of a dream report: the cycle id and the counts it mirrors into status. */
export const dreamReport = dreamReportSchema.pick({ runId: true, counts: true });
export type DreamReport = z.output<typeof dreamReport>;

/**
 * What the operator reads of a pending proposal to mirror it as an ArtifactProposal; the id and path within the
 * bounds of that object's spec.
 */
export const pendingProposal = proposalSchema
  .pick({
    id: true,
    artifactPath: true,
    baseDigest: true,
    proposedDigest: true,
    diff: true,
    rationale: true,
    sourceKnowledgeIds: true,
  })
  .extend({
    id: proposalSchema.shape.id.min(1).max(128),
    artifactPath: proposalSchema.shape.artifactPath.min(1).max(512),
    sourceKnowledgeIds: proposalSchema.shape.sourceKnowledgeIds.default([]),
  });
export type PendingProposal = z.output<typeof pendingProposal>;

const pendingProposals = z.object({ proposals: z.array(pendingProposal) });
const heldProposals = z.object({ proposals: z.array(z.object({ id: z.string() })) });
const currentPolicy = dimensionsResponse.pick({ appliedHash: true });

export class CortexClient {
  constructor(
    private readonly endpoint: CortexEndpoint,
    private readonly fetchImpl: typeof fetch = fetch,
    private readonly timeoutMs = 30_000,
  ) {}

  putDimensions(policy: DimensionPolicyInput): Promise<z.output<typeof putDimensionsResponse>> {
    return this.call("PUT", routes.putDimensions.url, policy, putDimensionsResponse);
  }

  /** The hash of the policy Cortex has in force (to notice a Cortex that lost or replaced it). */
  async currentHash(): Promise<string> {
    return (await this.call("GET", routes.getDimensions.url, undefined, currentPolicy)).appliedHash;
  }

  dream(request: DreamRequestInput): Promise<DreamReport> {
    return this.call("POST", routes.dream.url, request, dreamReport, 600_000);
  }

  async pendingProposals(): Promise<PendingProposal[]> {
    const body = await this.call(
      "GET",
      `${routes.proposals.url}?status=pending`,
      undefined,
      pendingProposals,
    );
    return body.proposals;
  }

  /** The id of every proposal Cortex holds, whatever its state (an erasure deletes those naming what it erased). */
  async heldProposalIds(): Promise<Set<string>> {
    const body = await this.call("GET", routes.proposals.url, undefined, heldProposals);
    return new Set(body.proposals.map((proposal) => proposal.id));
  }

  /** Cortex answers 409 when the file moved on from `baseDigest` (stale base) or the content is not what was approved. */
  promote(
    proposalId: string,
    approvedBy: string,
    proposedDigest: string,
    baseDigest: string | undefined,
  ): Promise<z.output<typeof promoteResponse>> {
    const body: PromoteRequestInput = {
      proposalId,
      approvedBy,
      expectedDigest: proposedDigest,
      ...(baseDigest ? { baseDigest } : {}),
    };
    return this.call("POST", routes.promote.url, body, promoteResponse);
  }

  async deny(proposalId: string, deniedBy: string, reason: string | undefined): Promise<void> {
    const body: DenyRequestInput = { deniedBy, ...(reason ? { reason } : {}) };
    // The answer is the denied proposal; nothing of it is needed.
    await this.call(
      "POST",
      routes.deny.url.replace(":id", encodeURIComponent(proposalId)),
      body,
      z.unknown(),
    );
  }

  /** Cortex reads every store whole; on a large household that takes a while. */
  checkConsistency(): Promise<ConsistencyReport> {
    return this.call("POST", routes.consistencyCheck.url, undefined, consistencyReport, 600_000);
  }

  /** Whether every stored item has a vector of the configured model, or how far a re-embedding has come. */
  embeddings(): Promise<EmbeddingStatus> {
    return this.call("GET", routes.embeddingStatus.url, undefined, embeddingStatus);
  }

  /** Whether a release's index migration (a knowledge index rebuild) runs, and which old indices are kept. */
  migrations(): Promise<MigrationStatus> {
    return this.call("GET", routes.migrationStatus.url, undefined, migrationStatus);
  }

  /** Room left on Cortex's volumes and OpenSearch's disk, and whether writes are refused for want of it. */
  storage(): Promise<StorageStatus> {
    return this.call("GET", routes.storageStatus.url, undefined, storageStatus);
  }

  /** Starts a backup in the background (409 when one runs or Cortex has no destination). */
  startBackup(request: BackupRequest = {}): Promise<BackupStarted> {
    return this.call("POST", routes.backupCreate.url, request, backupStarted);
  }

  backups(): Promise<BackupsResponse> {
    return this.call("GET", routes.backupList.url, undefined, backupsResponse);
  }

  /** Starts a restore onto this (empty) Cortex (404 unknown backup, 409 Cortex holds data). */
  startRestore(backupId: string): Promise<BackupStarted> {
    return this.call("POST", routes.restoreStart.url, { backupId }, backupStarted);
  }

  restoreStatus(): Promise<RestoreStatus> {
    return this.call("GET", routes.restoreStatus.url, undefined, restoreStatus);
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
