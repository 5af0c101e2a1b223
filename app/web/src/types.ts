/**
 * The JSON the pages read, as the app's API answers it (app/src/routes). Cortex's objects are typed loosely on
 * purpose: every field a page shows may be missing or of a newer shape, and a page renders what it finds.
 */

export interface Me {
  memberId: string;
  username: string;
  householdId: string;
  admin: boolean;
}

/** Every error the app sends. */
export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
}

export type LifecycleStatus = "active" | "demoted" | "invalidated";
export type KnowledgeScope = "user" | "household";

/** contract/src/knowledge.ts's knowledgeObject, every field but the id and statement optional here. */
export interface KnowledgeObject {
  id: string;
  statement: string;
  type?: string;
  claim?: { subject: string; predicate: string; object: string };
  provenance?: {
    source?: string;
    sessionId?: string;
    agentId?: string;
    channel?: string;
    tool?: string;
    sourceTurnIds?: string[];
    observedAt?: string;
    ingestedAt?: string;
  };
  scope?: string;
  owner?: { userId?: string; householdId?: string };
  privacy?: string;
  dimensions?: Record<string, string[]>;
  confidence?: number;
  reinforcementCount?: number;
  userDirective?: boolean;
  validity?: { validFrom?: string; invalidAt?: string | null };
  links?: { rel: string; targetId: string }[];
  status?: string;
  createdAt?: string;
  updatedAt?: string;
}

export interface KnowledgeItem {
  object: KnowledgeObject;
  /** The person's own item (user scope, theirs), as opposed to their household's. */
  mine?: boolean;
  contradictedBy?: { id: string; statement?: string }[];
}

export interface KnowledgePage {
  items: KnowledgeItem[];
  nextCursor: string | null;
  total?: number;
}

export interface KnowledgeQuery {
  q?: string;
  status?: LifecycleStatus[];
  scope?: KnowledgeScope[];
  limit?: number;
  cursor?: string;
  /** Another member (admins only). */
  user?: string;
}

export interface Corrected {
  invalidated: string;
  created: KnowledgeObject;
}

/** What a forget or an erasure removed: counts, possibly nested (erasureResponse.counts). */
export type Counts = Record<string, unknown>;

/** contract/src/archive.ts's archiveSummaryHit. */
export interface ArchiveHit {
  hash: string;
  summary: string;
  clusterId?: string | null;
  decayScore?: number;
  reinforcementCount?: number;
  consent?: { privacy?: string; allowRecall?: boolean };
  sourceSession?: string;
  sourceChannel?: string;
  createdAt?: string;
}

export interface ArchivedMessage {
  role: string;
  content: string;
  turnId?: string;
  at?: string;
  authorId?: string;
}

/** contract/src/archive.ts's memoryDocumentSchema. */
export interface MemoryDocument {
  createdAt?: string;
  source?: { sessionId?: string; channel?: string; agentId?: string };
  messages: ArchivedMessage[];
  attachments?: { name: string; mediaType: string; digest: string }[];
  tags?: string[];
  consentScope?: { ownerIds?: string[]; privacy?: string; allowRecall?: boolean };
}

export interface Transcript {
  hash: string;
  document: MemoryDocument;
}

export interface Approval {
  decision: string;
  by: string;
  at?: string;
  comment?: string;
}

export interface Proposal {
  name: string;
  createdAt?: string;
  artifactPath: string;
  rationale: string;
  diff: string;
  proposedBy?: string;
  phase: string;
  approval?: Approval;
  /** The commit an approved proposal became, once the operator promoted it. */
  promotion?: { commitId: string; promotedAt: string };
  /** Why the person cannot decide it now; absent: they may try. */
  blocker?: string;
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface ModelStatus {
  name: string;
  role?: string;
  digest?: string;
  pulledAt?: string;
  pull?: { status?: string; completedBytes?: number; totalBytes?: number; percent?: number; error?: string };
}

/** operator/src/api/v1alpha1/remram-appliance.ts's status, loosely. */
export interface ApplianceStatus {
  conditions?: Condition[];
  hardwareProfile?: string;
  gpu?: { available?: boolean; count?: number; memoryMiB?: number; product?: string };
  models?: ModelStatus[];
  endpoints?: Record<string, string | undefined>;
  [key: string]: unknown;
}

export interface DreamRun {
  startedAt?: string;
  finishedAt?: string;
  outcome?: string;
  message?: string;
  counts?: Record<string, number>;
  mirroredProposals?: number;
}

export interface DreamSchedule {
  name: string;
  schedule?: string;
  status: {
    conditions?: Condition[];
    lastScheduleTime?: string;
    lastSuccessfulTime?: string;
    nextScheduleTime?: string;
    lastRun?: DreamRun;
  };
}

export interface Diagnostics {
  appliance: { name: string; status: ApplianceStatus };
  dreamSchedules: DreamSchedule[];
}

/** app/src/diagnostics/readings.ts's Reading: one point of the plots. */
export interface MetricsReading {
  at: string;
  retrievalP50Ms: number | null;
  retrievalP95Ms: number | null;
  retrievals: number;
  degradedRate: number | null;
  captureBacklog: number | null;
}

/** app/src/diagnostics/view.ts's MetricsView. */
export interface DiagnosticsMetrics {
  source: "prometheus" | "metrics";
  windowSeconds: number;
  series: MetricsReading[];
  escalations: { label: string; count: number }[];
  degradedByCause: { label: string; count: number }[];
  captureBacklog: number | null;
  problems: string[];
}
