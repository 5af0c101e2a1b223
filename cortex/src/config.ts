import { readFileSync } from "node:fs";
import { z } from "zod";

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
    /** Prefix of every index and template Cortex owns. */
    indexPrefix: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,40}$/)
      .default("remram"),
    ollamaUrl: z.url().optional(),
    embedModel: z.string().min(1).default("all-minilm-l6-v2"),
    embedDimensions: z.coerce.number().int().min(8).max(4096).default(384),
    embedBatchSize: z.coerce.number().int().min(1).max(512).default(64),
    embedConcurrency: z.coerce.number().int().min(1).max(16).default(2),
    /** The bearer token clients must send (from CORTEX_TOKEN or the file named by CORTEX_TOKEN_FILE). */
    token: z.string().min(16, "the API token must be at least 16 characters"),
    /** Retrieval gives up on OpenSearch after this long (after the query embedding) and answers degraded. */
    retrieveTimeoutMs: z.coerce.number().int().min(50).max(30_000).default(1_500),
    /** Query embedding gives up after this long and retrieval goes lexical-only. */
    embedTimeoutMs: z.coerce.number().int().min(50).max(30_000).default(1_000),
    /** One ingest embedding batch gives up after this long and the batch is stored without vectors. */
    embedBatchTimeoutMs: z.coerce.number().int().min(1_000).max(600_000).default(120_000),
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
    gitAuthorName: z.string().min(1).default("Remram Cortex"),
    gitAuthorEmail: z.string().min(3).default("cortex@remram.invalid"),
  })
  .strict();
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
  CORTEX_EMBED_MODEL: "embedModel",
  CORTEX_EMBED_DIMENSIONS: "embedDimensions",
  CORTEX_EMBED_BATCH_SIZE: "embedBatchSize",
  CORTEX_EMBED_CONCURRENCY: "embedConcurrency",
  CORTEX_RETRIEVE_TIMEOUT_MS: "retrieveTimeoutMs",
  CORTEX_EMBED_TIMEOUT_MS: "embedTimeoutMs",
  CORTEX_EMBED_BATCH_TIMEOUT_MS: "embedBatchTimeoutMs",
  CORTEX_USAGE_FLUSH_INTERVAL_MS: "usageFlushIntervalMs",
  CORTEX_RECENCY_HALF_LIFE_DAYS: "recencyHalfLifeDays",
  CORTEX_LOW_CONFIDENCE_THRESHOLD: "lowConfidenceThreshold",
  CORTEX_RETRIEVE_CANDIDATES: "retrieveCandidates",
  CORTEX_WORKSPACE_DIR: "workspaceDir",
  CORTEX_ARCHIVE_DIR: "archiveDir",
};

/**
 * The names the operator's Cortex Deployment sets (operator/src/appliance/children/cortex.ts); a CORTEX_* variable of
 * the same meaning wins over them.
 */
const sharedEnvKeys: Record<string, keyof CortexConfig> = {
  REMRAM_OPENSEARCH_URL: "opensearchUrl",
  REMRAM_OLLAMA_URL: "ollamaUrl",
  REMRAM_EMBED_MODEL: "embedModel",
  REMRAM_WORKSPACE_DIR: "workspaceDir",
  REMRAM_TOP_K: "retrieveCandidates",
  GIT_AUTHOR_NAME: "gitAuthorName",
  GIT_AUTHOR_EMAIL: "gitAuthorEmail",
};

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/**
 * Config from an optional JSON file (CORTEX_CONFIG_FILE) overlaid by CORTEX_* variables. The token comes from
 * CORTEX_TOKEN or, preferably, CORTEX_TOKEN_FILE (a mounted Secret).
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
  if (env.CORTEX_TOKEN_FILE) {
    try {
      raw.token = readFile(env.CORTEX_TOKEN_FILE).trim();
    } catch (error) {
      throw new ConfigError(`CORTEX_TOKEN_FILE ${env.CORTEX_TOKEN_FILE}: ${describe(error)}`);
    }
  } else if (env.CORTEX_TOKEN) {
    raw.token = env.CORTEX_TOKEN;
  }
  const credentialsDir = env.CORTEX_OPENSEARCH_CREDENTIALS_DIR || env.REMRAM_OPENSEARCH_CREDENTIALS_DIR;
  if (credentialsDir) {
    try {
      raw.opensearchCredentials = {
        username: readFile(`${credentialsDir}/username`).trim(),
        password: readFile(`${credentialsDir}/password`).trim(),
      };
    } catch (error) {
      throw new ConfigError(`OpenSearch credentials in ${credentialsDir}: ${describe(error)}`);
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
    reverse.set("token", "CORTEX_TOKEN or CORTEX_TOKEN_FILE");
    const problems = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? "");
      return `${reverse.get(key) ?? key}: ${issue.message}`;
    });
    throw new ConfigError(`invalid Cortex configuration:\n  ${problems.join("\n  ")}`);
  }
  return parsed.data;
}

function readText(path: string): string {
  return readFileSync(path, "utf8");
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
