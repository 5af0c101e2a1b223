import { gatewayStateAttachmentName } from "@remram/contract";
import type { FastifyPluginAsync } from "fastify";
import { eraseUserData } from "./archive/erasure.js";
import { archiveRoutes } from "./archive/routes.js";
import { ArchiveStore } from "./archive/store.js";
import { FolderDestination } from "./backup/destination.js";
import { sealedGatewayState } from "./backup/gateway-state.js";
import { backupRoutes } from "./backup/routes.js";
import { S3Destination } from "./backup/s3-destination.js";
import { BackupService } from "./backup/service.js";
import { checkRoutes } from "./check/routes.js";
import { consistencyChecker } from "./check/service.js";
import type { ErasedContent } from "./core/erasure.js";
import type { ForgottenMark } from "./core/forgotten.js";
import { dreamRoutes } from "./dream/routes.js";
import { DreamRunner } from "./dream/service.js";
import { ensureMaturationIndices, type MaturationIndices } from "./knowledge/records.js";
import { forgetAgain } from "./person-knowledge/forget.js";
import { personKnowledgeRoutes } from "./person-knowledge/routes.js";
import { type GitIdentity, GitPromoter } from "./promote/git-promoter.js";
import { promoteRoutes } from "./promote/routes.js";
import { reflectRoutes } from "./reflect/routes.js";
import { rememberRoutes } from "./remember/routes.js";
import { storageRoutes } from "./storage/routes.js";
import { createOllamaChatModel } from "./store/chat-model.js";
import { registerVolumeMetrics } from "./volume-metrics.js";

/** Where reflection, dream, promotion and the archive keep their files, and who commits artifacts. */
export interface MaturationOptions {
  /** The workspace git repository artifacts are committed to. */
  workspaceDir: string;
  /** Folder under the workspace for generated artifacts. */
  artifactsDir?: string;
  /** Root of the hash-addressed archive. */
  archiveDir: string;
  gitAuthor: GitIdentity;
  /** Upper bound on a dream cycle's neighbour lookups. */
  dreamTimeLimitMs?: number;
  /** No new principle wording starts after this long into a cycle's wording phase (default 120 s). */
  dreamWordingBudgetMs?: number;
  /** At most this many principles are worded per cycle (default 16); the rest wait for the next. */
  dreamMaxWordings?: number;
}

/** Resolve once; a failure is forgotten so the next request tries again (OpenSearch may come up later). */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= make().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}

/**
 * Registers /reflect, /remember, /dream, /proposals, /promote, /archive, /admin/erasure, /admin/check,
 * /admin/storage, /admin/backups, /admin/restore and /person/knowledge on the Cortex app.
 */
export function maturationPlugin(options: MaturationOptions): FastifyPluginAsync {
  return async (app) => {
    const indices = once<MaturationIndices>(() => ensureMaturationIndices(app.cortex.store));
    // An explicit save (/remember) is waited on by a person's run: its indices exist before the first one arrives.
    void app.cortex.initialized.then(() => indices()).catch(() => undefined);
    const promoter = once(async () => {
      const git = new GitPromoter(options.workspaceDir, options.gitAuthor);
      const { rolledBack, staleLocks } = await git.prepare();
      if (staleLocks.length > 0)
        app.log.warn({ staleLocks }, "removed lock files an earlier Cortex left in the repository");
      if (rolledBack !== undefined)
        app.log.warn({ proposalId: rolledBack }, "rolled back an interrupted promotion");
      return git;
    });
    const archive = once(() => ArchiveStore.open(options.archiveDir, app.cortex.clock));
    const volumes = registerVolumeMetrics(app.cortex.metrics.registry, {
      workspace: options.workspaceDir,
      archive: options.archiveDir,
    });
    await app.register(storageRoutes(volumes));
    const { ollamaUrl, reflectionModel, reflectionTimeoutMs } = app.cortex.config;
    const principleModel =
      ollamaUrl === undefined || reflectionModel === undefined
        ? null
        : createOllamaChatModel({ url: ollamaUrl, model: reflectionModel, timeoutMs: reflectionTimeoutMs });
    const runner = new DreamRunner(
      app.cortex,
      indices,
      {
        workspaceDir: options.workspaceDir,
        artifactsDir: options.artifactsDir ?? "artifacts",
        timeLimitMs: options.dreamTimeLimitMs ?? 50_000,
        principleModel,
        wordingBudgetMs: options.dreamWordingBudgetMs ?? 120_000,
        maxWordingsPerCycle: options.dreamMaxWordings ?? 16,
      },
      app.cortex.metrics.registry,
    );
    await app.register(reflectRoutes(indices));
    // Explicit saves propose the page they land on at once, from the same workspace dream reads.
    await app.register(
      rememberRoutes(indices, {
        workspaceDir: options.workspaceDir,
        artifactsDir: options.artifactsDir ?? "artifacts",
      }),
    );
    await app.register(dreamRoutes(runner, indices));
    await app.register(promoteRoutes(promoter, indices));
    // Erasure rewrites the repository's history too; the archive feature gets only this function of promotion.
    const history = async (erased: ErasedContent) => (await promoter()).erase(erased);
    const { backupDir, backupS3, backupKeep, gatewayStateDir, backupAgeRecipients } = app.cortex.config;
    const gatewayState =
      gatewayStateDir === undefined || backupAgeRecipients.length === 0
        ? undefined
        : {
            name: gatewayStateAttachmentName,
            read: () => sealedGatewayState(gatewayStateDir, backupAgeRecipients),
          };
    const backups = new BackupService(
      app.cortex,
      backupS3 !== undefined
        ? new S3Destination(backupS3)
        : backupDir === undefined
          ? undefined
          : new FolderDestination(backupDir),
      {
        indices,
        archive,
        repository: promoter,
        ...(gatewayState && { gatewayState }),
        erase: async (userId, reason) =>
          eraseUserData(
            app.cortex,
            { indices: await indices(), archive, history },
            { userId, requestedBy: "restore", reason },
            "admin",
          ),
        forget: async (ids, forgottenAt, reason) =>
          forgetAgain(app.cortex, { indices: await indices(), history }, ids, forgottenAt, reason),
      },
      { keep: backupKeep },
    );
    // A forget's tombstones into the destination; the next backup copies them if this fails, so it only logs.
    const afterForgotten = (marks: readonly ForgottenMark[]) =>
      backups
        .recordForgotten(marks)
        .catch((error: unknown) =>
          app.log.warn({ err: error }, "could not record a forget in the backup destination"),
        );
    await app.register(
      archiveRoutes(archive, indices, history, (userId, erasedAt) => backups.recordErasure(userId, erasedAt)),
    );
    await app.register(backupRoutes(backups));
    // "My memory": a forget rewrites the repository's history like an erasure, through the same function.
    await app.register(personKnowledgeRoutes(indices, history, afterForgotten));
    const check = consistencyChecker(app.cortex, indices, {
      archive,
      // Through the promoter: its start-up rolls back an interrupted promotion, and its git config trusts the folder.
      repository: async () => (await promoter()).check(),
    });
    await app.register(checkRoutes(check));
  };
}
