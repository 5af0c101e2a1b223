import { privacyLevels } from "@remram/contract";
import { z } from "zod";

/**
 * The plugin's configuration (`plugins.entries.remram-hooks.config` in openclaw.json).
 * One schema: it types the code, validates at register(), and generates the manifest's JSON Schema
 * (`npm run manifest -w hooks`), so the gateway rejects a bad config before the plugin ever loads.
 */

const modelRef = z.strictObject({
  /** Provider id as configured under `models.providers` (e.g. "ollama"). */
  provider: z.string().min(1).max(100),
  /** Model id inside that provider. */
  model: z.string().min(1).max(200),
});

const domainPolicy = z.strictObject({
  name: z.string().min(1).max(64),
  /** Whole words or phrases that mark a prompt as belonging to this domain (case-insensitive). */
  keywords: z.array(z.string().min(1).max(100)).min(1).max(100),
  /** local-only: never leaves the box. prefer-cloud: escalate when a cloud model is configured. */
  policy: z.enum(["local-only", "prefer-cloud"]),
});

export const PluginConfigSchema = z.strictObject({
  cortex: z
    .strictObject({
      url: z
        .string()
        .regex(/^https?:\/\/[^\s]+$/, "an http(s) URL")
        .max(2048)
        .default("http://127.0.0.1:8080"),
      /** File holding Cortex's bearer token (a mounted Secret); re-read when Cortex answers 401. */
      tokenFile: z.string().min(1).max(1024).optional(),
      /** Hard cap on /retrieve, the only Cortex call on the user's path (seed 000 §6.2). */
      retrieveTimeoutMs: z.int().min(10).max(5_000).default(250),
      ingestTimeoutMs: z.int().min(100).max(120_000).default(5_000),
      reflectTimeoutMs: z.int().min(100).max(120_000).default(15_000),
    })
    .prefault({}),
  injection: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** Upper bound of the injected block, in estimated tokens; also sent to Cortex as the budget. */
      tokenCeiling: z.int().min(64).max(16_000).default(1_200),
      mode: z.enum(["standard", "deep"]).default("standard"),
      /** Group/room sessions have several readers: skip injection, or inject household/shared scope only. */
      groupSessions: z.enum(["skip", "household"]).default("skip"),
    })
    .prefault({}),
  principals: z
    .strictObject({
      householdId: z.string().min(1).max(200).optional(),
      /**
       * Household members' ids: the canonical names under session.identityLinks, which OpenClaw writes into a
       * direct session's key in place of the linked channel peer. A session whose peer is a member's id is that
       * member's on every channel. When set, household knowledge is for the people the config names (members,
       * identities' users, mainSessionUserId) only: any other peer gets no householdId.
       */
      members: z.array(z.string().min(1).max(200)).max(1_000).default([]),
      /**
       * "<channel>:<peer>" or "<peer>" (as in the session key) → canonical user id; mirrors session.identityLinks.
       * Compared case-insensitively, as OpenClaw lowercases peer ids in session keys.
       */
      identities: z.record(z.string().min(1).max(300), z.string().min(1).max(200)).default({}),
      /** Owner of the shared `agent:<id>:main` DM session; without it that session gets no injection. */
      mainSessionUserId: z.string().min(1).max(200).optional(),
    })
    .prefault({}),
  escalation: z
    .strictObject({
      enabled: z.boolean().default(true),
      local: modelRef.extend({ contextWindow: z.int().min(512).max(10_000_000).default(8_192) }).optional(),
      cloud: modelRef.optional(),
      /** Providers whose models run on the box; any other provider counts as cloud for the privacy rule. */
      localProviders: z.array(z.string().min(1).max(100)).max(50).default(["ollama"]),
      /** Escalate when the estimated prompt exceeds this share of the local model's window. */
      contextPressureRatio: z.number().min(0.1).max(1).default(0.8),
      reservedOutputTokens: z.int().min(0).max(100_000).default(512),
      complexityThreshold: z.int().min(1).max(100).default(4),
      directives: z
        .strictObject({
          local: z.array(z.string().min(1).max(40)).max(20).default(["/local", "#local"]),
          cloud: z.array(z.string().min(1).max(40)).max(20).default(["/cloud", "#cloud", "/escalate"]),
        })
        .prefault({}),
      domains: z.array(domainPolicy).max(50).default([]),
      /** Consent for private-scope knowledge to reach a cloud provider. Off unless the household opts in. */
      allowPrivateToCloud: z.boolean().default(false),
    })
    .prefault({}),
  capture: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** Tool output text beyond this is cut (the transcript keeps the full result). */
      maxTextChars: z.int().min(256).max(1_000_000).default(16_000),
      skipTools: z.array(z.string().min(1).max(200)).max(200).default([]),
    })
    .prefault({}),
  queue: z
    .strictObject({
      /** Directory of the durable queue; default `<OpenClaw state dir>/remram-hooks/queue`. */
      path: z.string().min(1).max(1024).optional(),
      maxItems: z.int().min(10).max(1_000_000).default(10_000),
      /** What to give up when full: the oldest waiting item, or the one arriving. Always counted and logged. */
      dropPolicy: z.enum(["drop-oldest", "drop-newest"]).default("drop-oldest"),
      drainIntervalMs: z.int().min(50).max(600_000).default(1_000),
      batchSize: z.int().min(1).max(256).default(50),
      backoffInitialMs: z.int().min(10).max(600_000).default(1_000),
      backoffMaxMs: z.int().min(10).max(3_600_000).default(60_000),
    })
    .prefault({}),
  reflection: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** The interaction delta handed to the reflection run is cut to this many characters. */
      maxTranscriptChars: z.int().min(500).max(200_000).default(8_000),
      runTimeoutMs: z.int().min(1_000).max(3_600_000).default(180_000),
      maxAttempts: z.int().min(1).max(20).default(3),
      /**
       * The model reflection runs on (default: the agent's). Point it at a provider entry whose params constrain
       * the reply to JSON (`response_format`), so a small local model still emits a parseable delta.
       */
      model: modelRef.optional(),
    })
    .prefault({}),
  explicitSave: z
    .strictObject({
      /** "remember that …", "save this", "#canon": stored in Cortex at once (explicit-save.ts). */
      enabled: z.boolean().default(true),
      /**
       * How long a run waits, from the message's arrival, for Cortex to store a save; past it the save is queued on
       * disk and the reply says it will be saved. The run is never blocked longer.
       */
      waitMs: z.int().min(50).max(5_000).default(1_500),
      /** Cap on one delivery of a queued save by the service. */
      deliveryTimeoutMs: z.int().min(100).max(120_000).default(15_000),
      /**
       * Where a page proposal is approved: the appliance and namespace the operator mirrors ArtifactProposals into
       * (the operator writes both), so the reply can name the object for `kubectl remram approve`.
       */
      approval: z
        .strictObject({
          appliance: z.string().min(1).max(253).optional(),
          namespace: z.string().min(1).max(63).optional(),
        })
        .prefault({}),
    })
    .prefault({}),
  archive: z
    .strictObject({
      /**
       * Seed 004's `memory.archive.enabled`: every finished session's transcript (session_end for any reason but
       * `deleted`) goes to Cortex's hash-addressed archive and, chunked, into retrieval. Off unless configured; the
       * appliance turns it on.
       */
      enabled: z.boolean().default(false),
      /** The archived document's consent: its privacy level, and whether memory_get may return it whole. */
      privacy: z.enum(privacyLevels).default("private"),
      allowRecall: z.boolean().default(true),
      /** A longer session goes to Cortex in parts, each a document of its own. */
      maxMessagesPerPart: z.int().min(10).max(5_000).default(500),
      maxCharsPerPart: z.int().min(10_000).max(2_000_000).default(200_000),
      /** Cap on one delivery: Cortex embeds every chunk of the part before it answers. */
      timeoutMs: z.int().min(1_000).max(600_000).default(120_000),
      /** A staged session with no turn and no end for this long (the gateway died) is archived by the service. */
      staleAfterHours: z.int().min(1).max(8_760).default(168),
    })
    .prefault({}),
  memoryTools: z
    .strictObject({
      /** memory_search (summaries) and memory_get (a whole document, where consent allows), backed by Cortex. */
      enabled: z.boolean().default(true),
      timeoutMs: z.int().min(100).max(60_000).default(5_000),
      maxResults: z.int().min(1).max(50).default(8),
      /** memory_get returns at most this much of a document's text. */
      maxDocumentChars: z.int().min(1_000).max(200_000).default(24_000),
    })
    .prefault({}),
  metrics: z
    .strictObject({
      /** http: Prometheus text at http://<host>:<port>/metrics from the plugin service. off: none. */
      mode: z.enum(["http", "off"]).default("http"),
      host: z.string().min(1).max(255).default("127.0.0.1"),
      port: z.int().min(0).max(65_535).default(9464),
    })
    .prefault({}),
  /** Start even though OpenClaw's built-in memory search is on (two retrieval authorities). */
  allowBuiltInMemory: z.boolean().default(false),
});

export type PluginConfig = z.infer<typeof PluginConfigSchema>;
export type PluginConfigInput = z.input<typeof PluginConfigSchema>;

/** Validate the raw plugin config; the error names every offending field. */
export function parsePluginConfig(raw: unknown): PluginConfig {
  const result = PluginConfigSchema.safeParse(raw ?? {});
  if (!result.success) {
    const fields = result.error.issues.map(
      (issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`,
    );
    throw new Error(`remram-hooks config is invalid: ${fields.join("; ")}`);
  }
  return result.data;
}

/**
 * JSON Schema of the config for openclaw.plugin.json. Input side (defaults stay optional), and every object
 * closed, because zod leaves input objects open and a typo should fail `openclaw config validate`.
 */
export function pluginConfigJsonSchema(): Record<string, unknown> {
  const { $schema: _draft, ...schema } = z.toJSONSchema(PluginConfigSchema, {
    target: "draft-7",
    io: "input",
  });
  return closeObjects(schema);
}

function closeObjects(node: Record<string, unknown>): Record<string, unknown> {
  const closed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (Array.isArray(value)) {
      closed[key] = value.map((item) => (isRecord(item) ? closeObjects(item) : item));
    } else {
      closed[key] = isRecord(value) ? closeObjects(value) : value;
    }
  }
  if (isRecord(node.properties) && node.additionalProperties === undefined)
    closed.additionalProperties = false;
  return closed;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
