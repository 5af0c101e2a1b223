import { readFileSync } from "node:fs";
import { callerNames, identifier } from "@remram/contract";
import { z } from "zod";

const credential = z.string().min(16, "a credential must be at least 16 characters").max(4096);

/** One credential per caller: at least one caller, and no two callers share a value. */
export const callerCredentials = z
  .object({
    gateway: credential.optional(),
    operator: credential.optional(),
    admin: credential.optional(),
    app: credential.optional(),
  })
  .strict()
  .refine((tokens) => Object.values(tokens).some((token) => token !== undefined), {
    message: "at least one caller needs a credential (gateway, operator, admin or app)",
  })
  .refine(
    (tokens) => {
      const values = Object.values(tokens).filter((token) => token !== undefined);
      return new Set(values).size === values.length;
    },
    { message: "each caller needs its own credential; two callers share one" },
  );

/** Everything Cortex reads at start-up. Validated once; a bad value stops the process with a clear message. */
export const cortexConfig = z
  .object({
    host: z.string().min(1).default("0.0.0.0"),
    port: z.coerce.number().int().min(0).max(65535).default(8080),
    logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    opensearchUrl: z.url(),
    /** Basic-auth credentials for an external OpenSearch (read from a mounted Secret's username/password files). */
    opensearchCredentials: z
      .object({ username: z.string().min(1), password: z.string().min(1) })
      .strict()
      .optional(),
    /** PEM bundle of the CA(s) an external OpenSearch's certificate chains to (read from the file named by *_CA_FILE). */
    opensearchCa: z
      .string()
      .includes("-----BEGIN CERTIFICATE-----", { message: "not a PEM certificate bundle" })
      .optional(),
    /** Prefix of every index and template Cortex owns. */
    indexPrefix: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,40}$/)
      .default("remram"),
    ollamaUrl: z.url().optional(),
    /**
     * Where vectors are computed: by Ollama at ollamaUrl (no ollamaUrl: no vectors), or in Cortex's own process with
     * ONNX Runtime from the model folder embedModelDir (store/onnx-embedder.ts), a few milliseconds a query.
     */
    embedRuntime: z.enum(["ollama", "onnx"]).default("ollama"),
    embedModelDir: z.string().min(1).optional(),
    /** ONNX Runtime's threads for one embedding run (onnx runtime only). */
    embedThreads: z.coerce.number().int().min(1).max(16).default(1),
    embedModel: z.string().min(1).default("all-minilm-l6-v2"),
    embedDimensions: z.coerce.number().int().min(8).max(4096).default(384),
    embedBatchSize: z.coerce.number().int().min(1).max(512).default(64),
    embedConcurrency: z.coerce.number().int().min(1).max(16).default(2),
    /**
     * The appliance's reflection model (RemramAppliance spec.ollama.models.reflection), served by Ollama at
     * ollamaUrl; dream words new principles with it. Unset: principles take their strongest evidence's wording.
     */
    reflectionModel: z.string().min(1).max(128).optional(),
    /** One wording call to the reflection model gives up after this long (a CPU box runs a 3B model slowly). */
    reflectionTimeoutMs: z.coerce.number().int().min(1_000).max(600_000).default(60_000),
    /** Each caller's bearer credential (files of CORTEX_CREDENTIALS_DIR, or CORTEX_<CALLER>_TOKEN). */
    credentials: callerCredentials,
    /** A folder with one file per caller (a mounted Secret); re-read every few seconds, so rotation needs no restart. */
    credentialsDir: z.string().min(1).optional(),
    /** How long a rotated credential is still accepted, unless its caller presents the new one sooner. */
    credentialOverlapSeconds: z.coerce.number().int().min(0).max(86_400).default(600),
    /** The appliance's household: household ids in requests must be this one (unset: no household scope). */
    householdId: identifier.optional(),
    /** Retrieval gives up on OpenSearch after this long (after the query embedding) and answers degraded. */
    retrieveTimeoutMs: z.coerce.number().int().min(50).max(30_000).default(1_500),
    /** Query embedding gives up after this long and retrieval goes lexical-only. */
    embedTimeoutMs: z.coerce.number().int().min(50).max(30_000).default(1_000),
    /** One ingest embedding batch gives up after this long and the batch is stored without vectors. */
    embedBatchTimeoutMs: z.coerce.number().int().min(1_000).max(600_000).default(120_000),
    /** After an embedding model change, the re-embedding job pauses this long after a failure (model not pulled yet). */
    embedFillRetryMs: z.coerce.number().int().min(100).max(600_000).default(15_000),
    /** After an upgrade that rebuilds the knowledge index, the rebuild waits this long after a failure. */
    rebuildRetryMs: z.coerce.number().int().min(100).max(600_000).default(30_000),
    /** Throttle of the rebuild's copy in documents a second (unset: as fast as OpenSearch goes). */
    rebuildDocsPerSecond: z.coerce.number().int().min(1).max(1_000_000).optional(),
    /** Days the knowledge index a rebuild replaced is kept (for a `helm rollback`) unless an admin confirms sooner. */
    rebuiltIndexKeepDays: z.coerce.number().min(0).max(3_650).default(7),
    /** Usage counters are aggregated in memory and flushed this often. */
    usageFlushIntervalMs: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
    /** Half-life of the recency feature. */
    recencyHalfLifeDays: z.coerce.number().min(1).max(3650).default(90),
    lowConfidenceThreshold: z.coerce.number().min(0).max(1).default(0.45),
    /** Candidates each retriever (BM25, k-NN, facets) contributes in standard mode; deep mode takes at least 100. */
    retrieveCandidates: z.coerce.number().int().min(1).max(200).default(40),
    /** The workspace git repository; when set, reflection, dream, promotion and the archive are served too. */
    workspaceDir: z.string().min(1).optional(),
    /** Root of the hash-addressed archive (default: `.remram-archive` beside the workspace). */
    archiveDir: z.string().min(1).optional(),
    /** Days without a recall after which an archived document is compressed (warm), then bundled (cold). */
    archiveWarmAfterDays: z.coerce.number().min(0).max(36_500).default(30),
    archiveColdAfterDays: z.coerce.number().min(0).max(36_500).default(180),
    /** How often an archive write may start a tiering pass; 0: only POST /archive/tiering moves documents. */
    archiveTieringIntervalMinutes: z.coerce.number().int().min(0).max(10_080).default(360),
    /**
     * Where backups go: a folder (a USB disk or NAS share mounted through a PersistentVolumeClaim). Unset: no
     * backups; POST /admin/backups answers 409.
     */
    backupDir: z.string().min(1).optional(),
    /** Complete backups kept; each successful backup removes older ones beyond this. */
    backupKeep: z.coerce.number().int().min(1).max(1_000).default(7),
    /** Or an S3-compatible bucket (a NAS's S3 service, a cloud bucket): its endpoint, bucket and folder. */
    backupS3: z
      .object({
        endpoint: z.url(),
        bucket: z.string().min(3).max(63),
        prefix: z
          .string()
          .max(256)
          .regex(
            /^(?:[A-Za-z0-9._-]+(?:\/[A-Za-z0-9._-]+)*)?$/,
            "a folder such as remram/moltbox, no leading or trailing /",
          )
          .default(""),
        region: z.string().min(1).max(64).default("us-east-1"),
        /** From CORTEX_BACKUP_S3_CREDENTIALS_DIR (files access-key-id and secret-access-key, a mounted Secret). */
        accessKeyId: z.string().min(1),
        secretAccessKey: z.string().min(1),
        /** That folder, read again for every request so a rotated key takes effect without a restart. */
        credentialsDir: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
    /**
     * The gateway's state folder (mounted read-only) and the household's age public keys: with both, each backup
     * carries that folder encrypted to those keys (backup/gateway-state.ts). Never in clear: it holds pairings.
     */
    gatewayStateDir: z.string().min(1).optional(),
    backupAgeRecipients: z
      .array(z.string().regex(/^age1[02-9ac-hj-np-z]{58}$/, "an age X25519 public key (age1…)"))
      .max(8)
      .default([]),
    gitAuthorName: z.string().min(1).default("Remram Cortex"),
    gitAuthorEmail: z.string().min(3).default("cortex@remram.invalid"),
  })
  .strict()
  .refine((config) => config.backupDir === undefined || config.backupS3 === undefined, {
    message: "CORTEX_BACKUP_DIR and CORTEX_BACKUP_S3_ENDPOINT name two backup destinations: set one",
    path: ["backupDir"],
  })
  .refine((config) => config.embedRuntime !== "onnx" || config.embedModelDir !== undefined, {
    message:
      "CORTEX_EMBED_RUNTIME=onnx needs CORTEX_EMBED_MODEL_DIR, the folder of the model (model.onnx, tokenizer.json, embedding.json)",
    path: ["embedModelDir"],
  });
export type CortexConfig = z.output<typeof cortexConfig>;
export type CortexConfigInput = z.input<typeof cortexConfig>;

/** Environment variable → config key. */
const envKeys: Record<string, keyof CortexConfig> = {
  CORTEX_HOST: "host",
  CORTEX_PORT: "port",
  CORTEX_LOG_LEVEL: "logLevel",
  CORTEX_OPENSEARCH_URL: "opensearchUrl",
  CORTEX_INDEX_PREFIX: "indexPrefix",
  CORTEX_OLLAMA_URL: "ollamaUrl",
  CORTEX_EMBED_RUNTIME: "embedRuntime",
  CORTEX_EMBED_MODEL_DIR: "embedModelDir",
  CORTEX_EMBED_THREADS: "embedThreads",
  CORTEX_EMBED_MODEL: "embedModel",
  CORTEX_EMBED_DIMENSIONS: "embedDimensions",
  CORTEX_EMBED_BATCH_SIZE: "embedBatchSize",
  CORTEX_EMBED_CONCURRENCY: "embedConcurrency",
  CORTEX_REFLECTION_MODEL: "reflectionModel",
  CORTEX_REFLECTION_TIMEOUT_MS: "reflectionTimeoutMs",
  CORTEX_RETRIEVE_TIMEOUT_MS: "retrieveTimeoutMs",
  CORTEX_EMBED_TIMEOUT_MS: "embedTimeoutMs",
  CORTEX_EMBED_BATCH_TIMEOUT_MS: "embedBatchTimeoutMs",
  CORTEX_EMBED_FILL_RETRY_MS: "embedFillRetryMs",
  CORTEX_REBUILD_RETRY_MS: "rebuildRetryMs",
  CORTEX_REBUILD_DOCS_PER_SECOND: "rebuildDocsPerSecond",
  CORTEX_REBUILT_INDEX_KEEP_DAYS: "rebuiltIndexKeepDays",
  CORTEX_USAGE_FLUSH_INTERVAL_MS: "usageFlushIntervalMs",
  CORTEX_RECENCY_HALF_LIFE_DAYS: "recencyHalfLifeDays",
  CORTEX_LOW_CONFIDENCE_THRESHOLD: "lowConfidenceThreshold",
  CORTEX_RETRIEVE_CANDIDATES: "retrieveCandidates",
  CORTEX_WORKSPACE_DIR: "workspaceDir",
  CORTEX_ARCHIVE_DIR: "archiveDir",
  CORTEX_BACKUP_DIR: "backupDir",
  CORTEX_BACKUP_KEEP: "backupKeep",
  CORTEX_GATEWAY_STATE_DIR: "gatewayStateDir",
  CORTEX_ARCHIVE_WARM_AFTER_DAYS: "archiveWarmAfterDays",
  CORTEX_ARCHIVE_COLD_AFTER_DAYS: "archiveColdAfterDays",
  CORTEX_ARCHIVE_TIERING_INTERVAL_MINUTES: "archiveTieringIntervalMinutes",
  CORTEX_CREDENTIALS_DIR: "credentialsDir",
  CORTEX_CREDENTIAL_OVERLAP_SECONDS: "credentialOverlapSeconds",
  CORTEX_HOUSEHOLD_ID: "householdId",
};

/**
 * The names the operator's Cortex Deployment sets (operator/src/appliance/children/cortex.ts); a CORTEX_* variable of
 * the same meaning wins over them.
 */
const sharedEnvKeys: Record<string, keyof CortexConfig> = {
  REMRAM_OPENSEARCH_URL: "opensearchUrl",
  REMRAM_OLLAMA_URL: "ollamaUrl",
  REMRAM_EMBED_MODEL: "embedModel",
  REMRAM_REFLECTION_MODEL: "reflectionModel",
  REMRAM_WORKSPACE_DIR: "workspaceDir",
  REMRAM_TOP_K: "retrieveCandidates",
  REMRAM_HOUSEHOLD_ID: "householdId",
  GIT_AUTHOR_NAME: "gitAuthorName",
  GIT_AUTHOR_EMAIL: "gitAuthorEmail",
};

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/**
 * Config from an optional JSON file (CORTEX_CONFIG_FILE) overlaid by CORTEX_* variables. The callers' credentials
 * are the files of CORTEX_CREDENTIALS_DIR (mounted Secrets) when it is set, else the CORTEX_<CALLER>_TOKEN variables.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv,
  readFile: (path: string) => string = readText,
): CortexConfig {
  const raw: Record<string, unknown> = {};
  const configFile = env.CORTEX_CONFIG_FILE;
  if (configFile) {
    try {
      Object.assign(raw, JSON.parse(readFile(configFile)) as Record<string, unknown>);
    } catch (error) {
      throw new ConfigError(`CORTEX_CONFIG_FILE ${configFile}: ${describe(error)}`);
    }
  }
  for (const [variable, key] of [...Object.entries(sharedEnvKeys), ...Object.entries(envKeys)]) {
    const value = env[variable];
    if (value !== undefined && value !== "") raw[key] = value;
  }
  // With a credentials folder its files are the credentials (they are re-read for rotation); else the variables.
  const credentials: Record<string, string> = {};
  const credentialsDir = env.CORTEX_CREDENTIALS_DIR;
  if (credentialsDir) {
    try {
      Object.assign(credentials, readCallerCredentials(credentialsDir, readFile));
    } catch (error) {
      throw new ConfigError(`CORTEX_CREDENTIALS_DIR ${credentialsDir}: ${describe(error)}`);
    }
  } else {
    for (const caller of callerNames) {
      const value = env[`CORTEX_${caller.toUpperCase()}_TOKEN`];
      if (value !== undefined && value !== "") credentials[caller] = value;
    }
  }
  raw.credentials = { ...(raw.credentials as Record<string, string> | undefined), ...credentials };
  const opensearchCredentialsDir =
    env.CORTEX_OPENSEARCH_CREDENTIALS_DIR || env.REMRAM_OPENSEARCH_CREDENTIALS_DIR;
  if (opensearchCredentialsDir) {
    try {
      raw.opensearchCredentials = {
        username: readFile(`${opensearchCredentialsDir}/username`).trim(),
        password: readFile(`${opensearchCredentialsDir}/password`).trim(),
      };
    } catch (error) {
      throw new ConfigError(`OpenSearch credentials in ${opensearchCredentialsDir}: ${describe(error)}`);
    }
  }
  // Space-separated, as `age -r` takes them one by one.
  const recipients = env.CORTEX_BACKUP_AGE_RECIPIENTS?.trim();
  if (recipients) raw.backupAgeRecipients = recipients.split(/\s+/);
  const s3Endpoint = env.CORTEX_BACKUP_S3_ENDPOINT;
  if (s3Endpoint) {
    const s3CredentialsDir = env.CORTEX_BACKUP_S3_CREDENTIALS_DIR ?? "";
    try {
      raw.backupS3 = {
        endpoint: s3Endpoint,
        bucket: env.CORTEX_BACKUP_S3_BUCKET,
        ...(env.CORTEX_BACKUP_S3_PREFIX ? { prefix: env.CORTEX_BACKUP_S3_PREFIX } : {}),
        ...(env.CORTEX_BACKUP_S3_REGION ? { region: env.CORTEX_BACKUP_S3_REGION } : {}),
        ...readS3Credentials(s3CredentialsDir, readFile),
        credentialsDir: s3CredentialsDir,
      };
    } catch (error) {
      throw new ConfigError(
        `S3 backup credentials in CORTEX_BACKUP_S3_CREDENTIALS_DIR (${s3CredentialsDir || "unset"}): ${describe(error)}`,
      );
    }
  }
  const opensearchCaFile = env.CORTEX_OPENSEARCH_CA_FILE || env.REMRAM_OPENSEARCH_CA_FILE;
  if (opensearchCaFile) {
    try {
      raw.opensearchCa = readFile(opensearchCaFile);
    } catch (error) {
      throw new ConfigError(`OpenSearch CA bundle ${opensearchCaFile}: ${describe(error)}`);
    }
  }
  const parsed = cortexConfig.safeParse(raw);
  if (!parsed.success) {
    const reverse = new Map(
      [...Object.entries(sharedEnvKeys), ...Object.entries(envKeys)].map(([variable, key]) => [
        key as string,
        variable,
      ]),
    );
    const problems = parsed.error.issues.map((issue) => {
      const key =
        issue.path[0] === "credentials"
          ? issue.path[1] === undefined
            ? "CORTEX_CREDENTIALS_DIR or CORTEX_<CALLER>_TOKEN"
            : `CORTEX_${String(issue.path[1]).toUpperCase()}_TOKEN`
          : String(issue.path[0] ?? "");
      const name = key === "opensearchCa" ? "CORTEX_OPENSEARCH_CA_FILE" : (reverse.get(key) ?? key);
      return `${name}: ${issue.message}`;
    });
    throw new ConfigError(`invalid Cortex configuration:\n  ${problems.join("\n  ")}`);
  }
  return parsed.data;
}

/**
 * The caller credentials in a folder: one file per caller named like the caller (`gateway`, `operator`, `admin`,
 * `app`); a missing file means that caller has none. Read at start and again on every refresh.
 */
export function readCallerCredentials(
  dir: string,
  readFile: (path: string) => string = readText,
): Partial<Record<(typeof callerNames)[number], string>> {
  const tokens: Partial<Record<(typeof callerNames)[number], string>> = {};
  for (const caller of callerNames) {
    let text: string;
    try {
      text = readFile(`${dir}/${caller}`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw error;
    }
    const token = text.trim();
    if (token !== "") tokens[caller] = token;
  }
  return tokens;
}

/** An S3 key pair from a folder holding the files `access-key-id` and `secret-access-key` (a mounted Secret). */
export function readS3Credentials(
  dir: string,
  readFile: (path: string) => string = readText,
): { accessKeyId: string; secretAccessKey: string } {
  return {
    accessKeyId: readFile(`${dir}/access-key-id`).trim(),
    secretAccessKey: readFile(`${dir}/secret-access-key`).trim(),
  };
}

function readText(path: string): string {
  return readFileSync(path, "utf8");
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
