import type { z } from "zod";
import {
  archiveHashParams,
  archiveRecallResponse,
  archiveRequest,
  archiveResponse,
  archiveSearchRequest,
  archiveSearchResponse,
  archiveTieringResponse,
  archiveVerifyResponse,
  erasureRequest,
  erasureResponse,
  transcriptArchiveRequest,
  transcriptArchiveResponse,
} from "./archive.js";
import { backupRequest, backupStarted, backupsResponse, restoreRequest, restoreStatus } from "./backup.js";
import type { CallerName } from "./callers.js";
import { principal } from "./common.js";
import { consistencyReport } from "./consistency.js";
import { dimensionPolicy, dimensionsResponse, putDimensionsResponse } from "./dimensions.js";
import {
  dreamBusyResponse,
  dreamCycleParams,
  dreamReportSchema,
  dreamRequest,
  dreamStatusSchema,
} from "./dream.js";
import { embeddingStatus } from "./embeddings.js";
import { erasedResponse, errorResponse } from "./errors.js";
import { explicitSaveRequest, explicitSaveResponse } from "./explicit-save.js";
import { livenessResponse, readinessResponse } from "./health.js";
import { ingestRequest, ingestResponse } from "./ingest.js";
import { migrationStatus, migrationsConfirmed } from "./migrations.js";
import { personExportRequest, personExportResponse } from "./person-export.js";
import {
  personKnowledgeCorrectRequest,
  personKnowledgeCorrectResponse,
  personKnowledgeForgetRequest,
  personKnowledgeForgetResponse,
  personKnowledgeRequest,
  personKnowledgeResponse,
} from "./person-knowledge.js";
import {
  denyRequest,
  promoteRequest,
  promoteResponse,
  proposalParams,
  proposalSchema,
  proposalsQuery,
  proposalsResponse,
} from "./promote.js";
import { reflectRequest, reflectResponse, scopeViolationResponse } from "./reflect.js";
import { retrieveRequest, retrieveResponse } from "./retrieve.js";
import { storageStatus } from "./storage.js";

/** Fastify's route schema, with zod schemas: what Cortex passes as a route's `schema` option. */
export interface RouteSchema {
  summary?: string;
  params?: z.ZodType;
  querystring?: z.ZodType;
  body?: z.ZodType;
  response: Readonly<Record<number, z.ZodType>>;
}

export interface RouteContract {
  method: "GET" | "POST" | "PUT";
  /** Fastify's path syntax: `:name` for a path parameter. */
  url: string;
  /** Answers without a credential (liveness and readiness). */
  open?: boolean;
  /** The callers whose credential opens the route; Cortex refuses every other caller with 403. */
  callers?: readonly CallerName[];
  schema: RouteSchema;
}

/**
 * Every route of Cortex's API with its schemas. Cortex registers each with `schema: routes.<name>.schema`, and
 * openApiDocument() describes the same table, so the served schemas and the OpenAPI document cannot part.
 */
export const routes = {
  healthz: {
    method: "GET",
    url: "/healthz",
    open: true,
    schema: { response: { 200: livenessResponse } },
  },
  readyz: {
    method: "GET",
    url: "/readyz",
    open: true,
    schema: { response: { 200: readinessResponse, 503: readinessResponse } },
  },
  ingest: {
    method: "POST",
    url: "/ingest",
    callers: ["gateway"],
    schema: {
      summary: "Store structured events as knowledge objects and chunks; idempotent by provenance key",
      body: ingestRequest,
      response: {
        200: ingestResponse,
        400: errorResponse,
        401: errorResponse,
        403: errorResponse,
        410: erasedResponse,
        413: errorResponse,
        503: errorResponse,
      },
    },
  },
  retrieve: {
    method: "POST",
    url: "/retrieve",
    callers: ["gateway", "app"],
    schema: {
      summary: "RAM: policy-gated hybrid retrieval assembled into a token-bounded bundle",
      body: retrieveRequest,
      response: { 200: retrieveResponse, 400: errorResponse, 401: errorResponse, 403: errorResponse },
    },
  },
  getDimensions: {
    method: "GET",
    url: "/dimensions",
    callers: ["operator", "admin", "app"],
    schema: {
      summary: "The dimension policy in force and the most frequent candidate dimensions",
      response: { 200: dimensionsResponse, 401: errorResponse, 403: errorResponse, 503: errorResponse },
    },
  },
  putDimensions: {
    method: "PUT",
    url: "/dimensions",
    callers: ["operator"],
    schema: {
      summary: "Replace the dimension policy (the operator syncs DimensionPolicy here)",
      body: dimensionPolicy,
      response: {
        200: putDimensionsResponse,
        400: errorResponse,
        401: errorResponse,
        403: errorResponse,
        503: errorResponse,
      },
    },
  },
  reflect: {
    method: "POST",
    url: "/reflect",
    callers: ["gateway"],
    schema: {
      summary:
        "Apply a reflection delta: reinforce or create objects, invalidate corrected ones, link related",
      body: reflectRequest,
      response: {
        200: reflectResponse,
        400: errorResponse,
        401: errorResponse,
        403: scopeViolationResponse,
        410: erasedResponse,
        503: errorResponse,
      },
    },
  },
  remember: {
    method: "POST",
    url: "/remember",
    callers: ["gateway"],
    schema: {
      summary:
        'An explicit save ("remember that …"): stored at once with the user\'s trust, its artifact page proposed for approval',
      body: explicitSaveRequest,
      response: {
        200: explicitSaveResponse,
        400: errorResponse,
        401: errorResponse,
        403: errorResponse,
        410: erasedResponse,
        503: errorResponse,
      },
    },
  },
  dream: {
    method: "POST",
    url: "/dream",
    callers: ["operator"],
    schema: {
      summary: "Run one reconciliation cycle (single-flight) and return its report",
      body: dreamRequest,
      response: {
        200: dreamReportSchema,
        400: errorResponse,
        401: errorResponse,
        403: errorResponse,
        409: dreamBusyResponse,
        503: errorResponse,
      },
    },
  },
  dreamStatus: {
    method: "GET",
    url: "/dream/status",
    callers: ["operator", "admin"],
    schema: {
      summary: "The running dream cycle, if any",
      response: { 200: dreamStatusSchema, 401: errorResponse, 403: errorResponse },
    },
  },
  dreamReport: {
    method: "GET",
    url: "/dream/:cycleId",
    callers: ["operator", "admin"],
    schema: {
      summary: "The stored report of a finished cycle",
      params: dreamCycleParams,
      response: {
        200: dreamReportSchema,
        202: dreamStatusSchema,
        401: errorResponse,
        403: errorResponse,
        404: errorResponse,
      },
    },
  },
  proposals: {
    method: "GET",
    url: "/proposals",
    callers: ["operator", "app"],
    schema: {
      summary: "Artifact proposals by state",
      querystring: proposalsQuery,
      response: { 200: proposalsResponse, 401: errorResponse, 403: errorResponse },
    },
  },
  promote: {
    method: "POST",
    url: "/promote",
    callers: ["operator"],
    schema: {
      summary: "Write an approved proposal into the workspace, commit it, reindex it (atomic, idempotent)",
      body: promoteRequest,
      response: {
        200: promoteResponse,
        400: errorResponse,
        401: errorResponse,
        403: errorResponse,
        404: errorResponse,
        409: errorResponse,
        /** The workspace volume is full: nothing was committed, the proposal stays approvable. */
        507: errorResponse,
      },
    },
  },
  deny: {
    method: "POST",
    url: "/proposals/:id/deny",
    callers: ["operator"],
    schema: {
      summary: "Record a denial with who and why",
      params: proposalParams,
      body: denyRequest,
      response: {
        200: proposalSchema,
        400: errorResponse,
        401: errorResponse,
        403: errorResponse,
        404: errorResponse,
        409: errorResponse,
      },
    },
  },
  archive: {
    method: "POST",
    url: "/archive",
    callers: ["gateway"],
    schema: {
      summary: "Archive a redacted, compacted transcript range under the SHA-256 of its canonical bytes",
      body: archiveRequest,
      response: {
        200: archiveResponse,
        400: errorResponse,
        401: errorResponse,
        403: errorResponse,
        410: erasedResponse,
        503: errorResponse,
        /** The archive volume is full: nothing was stored; the gateway keeps it and retries. */
        507: errorResponse,
      },
    },
  },
  archiveTranscript: {
    method: "POST",
    url: "/archive/transcripts",
    callers: ["gateway"],
    schema: {
      summary:
        "Archive a finished session's transcript under its hash and chunk it into retrieval, each chunk citing the hash",
      body: transcriptArchiveRequest,
      response: {
        200: transcriptArchiveResponse,
        400: errorResponse,
        401: errorResponse,
        403: errorResponse,
        410: erasedResponse,
        503: errorResponse,
        /** The archive volume is full: nothing was stored; the gateway keeps it and retries. */
        507: errorResponse,
      },
    },
  },
  archiveSearch: {
    method: "POST",
    url: "/archive/search",
    callers: ["gateway", "app"],
    schema: {
      summary: "Search summaries by text and coordinates; returns summaries only, never documents",
      body: archiveSearchRequest,
      response: {
        200: archiveSearchResponse,
        400: errorResponse,
        401: errorResponse,
        403: errorResponse,
        503: errorResponse,
      },
    },
  },
  archiveRecall: {
    method: "GET",
    url: "/archive/:hash",
    callers: ["gateway", "app"],
    schema: {
      summary: "The full archived document, only when the principal's consent and the policy allow it",
      params: archiveHashParams,
      querystring: principal,
      response: {
        200: archiveRecallResponse,
        400: errorResponse,
        401: errorResponse,
        403: errorResponse,
        404: errorResponse,
        500: errorResponse,
        503: errorResponse,
      },
    },
  },
  archiveVerify: {
    method: "GET",
    url: "/archive/verify",
    callers: ["operator", "admin"],
    schema: {
      summary: "Re-hash every archived document and report those that no longer match",
      response: { 200: archiveVerifyResponse, 401: errorResponse, 403: errorResponse, 503: errorResponse },
    },
  },
  archiveTiering: {
    method: "POST",
    url: "/archive/tiering",
    callers: ["operator", "admin"],
    schema: {
      summary:
        "Move archived documents idle long enough to the warm (compressed) and cold (bundled) tiers now",
      response: { 200: archiveTieringResponse, 401: errorResponse, 403: errorResponse, 503: errorResponse },
    },
  },
  erasure: {
    method: "POST",
    url: "/admin/erasure",
    callers: ["admin", "app"],
    schema: {
      summary:
        "Really remove a user's data from every store (index, records, archive, git history) and refuse its return; audited",
      body: erasureRequest,
      response: {
        200: erasureResponse,
        400: errorResponse,
        401: errorResponse,
        403: errorResponse,
        503: errorResponse,
      },
    },
  },
  consistencyCheck: {
    method: "POST",
    url: "/admin/check",
    callers: ["operator", "admin"],
    schema: {
      summary:
        "Read every store whole and compare them: archive hashes, vectors against their objects, chunks against their transcripts, proposals against knowledge and commits, git fsck",
      response: { 200: consistencyReport, 401: errorResponse, 403: errorResponse, 503: errorResponse },
    },
  },
  embeddingStatus: {
    method: "GET",
    url: "/admin/embeddings",
    callers: ["operator", "admin"],
    schema: {
      summary:
        "The embedding model's vectors: current, or being made again after a model change (progress, and why it waits)",
      response: { 200: embeddingStatus, 401: errorResponse, 403: errorResponse },
    },
  },
  storageStatus: {
    method: "GET",
    url: "/admin/storage",
    callers: ["operator", "admin"],
    schema: {
      summary:
        "Room left on Cortex's volumes and OpenSearch's disk, and whether writes are refused for want of space",
      response: { 200: storageStatus, 401: errorResponse, 403: errorResponse },
    },
  },
  personExport: {
    method: "POST",
    url: "/admin/export",
    callers: ["admin", "app"],
    schema: {
      summary:
        "Everything Cortex holds that is a person's (knowledge objects, archived transcripts' summaries), to take along",
      body: personExportRequest,
      response: {
        200: personExportResponse,
        400: errorResponse,
        401: errorResponse,
        403: errorResponse,
        503: errorResponse,
      },
    },
  },
  personKnowledge: {
    method: "POST",
    url: "/person/knowledge",
    callers: ["admin", "app"],
    schema: {
      summary:
        "What a person may see of what is remembered: their own knowledge and the household's, searched or newest first, paged",
      body: personKnowledgeRequest,
      response: {
        200: personKnowledgeResponse,
        400: errorResponse,
        401: errorResponse,
        403: errorResponse,
        503: errorResponse,
      },
    },
  },
  personKnowledgeCorrect: {
    method: "POST",
    url: "/person/knowledge/correct",
    callers: ["admin", "app"],
    schema: {
      summary:
        "A person corrects one active object: it is invalidated (kept for the history) and a new one states the correction",
      body: personKnowledgeCorrectRequest,
      response: {
        200: personKnowledgeCorrectResponse,
        400: errorResponse,
        401: errorResponse,
        403: errorResponse,
        404: errorResponse,
        409: errorResponse,
        503: errorResponse,
      },
    },
  },
  personKnowledgeForget: {
    method: "POST",
    url: "/person/knowledge/forget",
    callers: ["admin", "app"],
    schema: {
      summary:
        "Really remove single objects from every store that holds them and refuse their return (all or nothing); audited",
      body: personKnowledgeForgetRequest,
      response: {
        200: personKnowledgeForgetResponse,
        400: errorResponse,
        401: errorResponse,
        403: errorResponse,
        404: errorResponse,
        503: errorResponse,
      },
    },
  },
  backupCreate: {
    method: "POST",
    url: "/admin/backups",
    callers: ["operator", "admin"],
    schema: {
      summary:
        "Start a backup of every index, the workspace repository and the archive into the backup destination; GET /admin/backups follows it",
      body: backupRequest.nullish(),
      response: {
        202: backupStarted,
        401: errorResponse,
        403: errorResponse,
        409: errorResponse,
        503: errorResponse,
        507: errorResponse,
      },
    },
  },
  backupList: {
    method: "GET",
    url: "/admin/backups",
    callers: ["operator", "admin"],
    schema: {
      summary: "The backups in the destination, the one running now with its progress, and the last failure",
      response: { 200: backupsResponse, 401: errorResponse, 403: errorResponse, 503: errorResponse },
    },
  },
  restoreStart: {
    method: "POST",
    url: "/admin/restore",
    callers: ["operator", "admin"],
    schema: {
      summary:
        "Restore a backup onto this Cortex, which must hold nothing yet, and replay the erasures recorded after it; GET /admin/restore follows it",
      body: restoreRequest,
      response: {
        202: backupStarted,
        400: errorResponse,
        401: errorResponse,
        403: errorResponse,
        404: errorResponse,
        409: errorResponse,
        503: errorResponse,
      },
    },
  },
  restoreStatus: {
    method: "GET",
    url: "/admin/restore",
    callers: ["operator", "admin"],
    schema: {
      summary: "The restore running now with its progress, the last one's report and the last failure",
      response: { 200: restoreStatus, 401: errorResponse, 403: errorResponse, 503: errorResponse },
    },
  },
  migrationStatus: {
    method: "GET",
    url: "/admin/migrations",
    callers: ["operator", "admin"],
    schema: {
      summary:
        "Index migrations: a knowledge index rebuild after an upgrade (progress, why it waits) and the old indices kept for a rollback",
      response: { 200: migrationStatus, 401: errorResponse, 403: errorResponse },
    },
  },
  migrationsConfirm: {
    method: "POST",
    url: "/admin/migrations/confirm",
    callers: ["admin"],
    schema: {
      summary:
        "Confirm the migrations: delete the knowledge indices kept for a rollback (refused while a rebuild runs)",
      response: { 200: migrationsConfirmed, 401: errorResponse, 403: errorResponse, 409: errorResponse },
    },
  },
} as const satisfies Record<string, RouteContract>;

export type RouteName = keyof typeof routes;
