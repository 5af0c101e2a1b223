/**
 * The Fastify app factory. Routes are plugins over one shared context (store, embedder, policy, metrics, usage);
 * reflection, dream, promotion and archive register theirs the same way through `plugins`.
 */

import { type EmbeddingStatus, openApiDocument, routes } from "@remram/contract";
import Fastify, {
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyServerOptions,
  LogController,
} from "fastify";
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import { authenticated, CallerCredentials } from "./auth.js";
import { type CortexConfig, callerCredentials, readCallerCredentials } from "./config.js";
import type { CortexContext } from "./context.js";
import { dimensionsRoutes } from "./dimensions/routes.js";
import { EmbeddingFill } from "./embeddings/fill.js";
import { embeddingsRoutes } from "./embeddings/routes.js";
import { healthRoutes } from "./health/routes.js";
import { errorHandler, serviceUnavailable } from "./http-errors.js";
import { ingestRoutes } from "./ingest/routes.js";
import { PolicyHolder } from "./knowledge/dimension-policy.js";
import { UsageTracker } from "./knowledge/usage.js";
import { type CortexMetrics, createMetrics } from "./metrics.js";
import { KnowledgeRebuild } from "./migrations/rebuild-job.js";
import { migrationRoutes } from "./migrations/routes.js";
import { retrieveRoutes } from "./retrieve/routes.js";
import { createStore } from "./store/client.js";
import { countObjectsByTypeAndStatus, incrementUsage } from "./store/counters.js";
import { createOllamaEmbedder } from "./store/embedder.js";
import { ensureIndices } from "./store/indices.js";
import { loadOnnxEmbedder } from "./store/onnx-embedder.js";

/** How often the credentials folder is re-read: a rotated Secret reaches the files at the kubelet's next sync. */
const credentialRefreshMs = 5_000;

/** How long a write waits for the index set-up at start-up before it is refused with 503. */
const writeSetupWaitMs = 10_000;

export interface BuildAppOptions {
  config: CortexConfig;
  /** Route plugins of other modules (reflect, dream, promote, archive), registered after the core routes. */
  plugins?: readonly FastifyPluginAsync[];
  clock?: () => Date;
  logger?: FastifyServerOptions["logger"];
  /** Cosine floor for k-NN candidates. */
  minVectorSimilarity?: number;
}

/** The embedding status while the indices are being set up. */
function startingEmbeddings(config: CortexConfig, embeds: boolean): EmbeddingStatus {
  return {
    model: embeds ? config.embedModel : null,
    dimensions: config.embedDimensions,
    state: "starting",
    objects: { done: 0, total: 0 },
    chunks: { done: 0, total: 0 },
  };
}

export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const clock = options.clock ?? (() => new Date());
  const app = Fastify({
    logger: options.logger ?? { level: config.logLevel },
    // One line per request would drown the logs of a service called on every prompt; metrics carry latency.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 16 * 1024 * 1024,
    // Ids in paths (cycle and proposal ids) may be 128 characters; Fastify's default of 100 answers 414 below that.
    routerOptions: { maxParamLength: 256 },
    // Bounded shutdown: in-flight requests finish, idle keep-alive sockets close.
    forceCloseConnections: "idle",
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  const store = createStore({
    url: config.opensearchUrl,
    ...(config.opensearchCredentials ? { credentials: config.opensearchCredentials } : {}),
    ...(config.opensearchCa ? { ca: config.opensearchCa } : {}),
    indexPrefix: config.indexPrefix,
    embedDimensions: config.embedDimensions,
  });
  let metrics: CortexMetrics | undefined;
  const observeEmbedding = (seconds: number, purpose: "query" | "ingest") =>
    metrics?.embeddingDuration.observe({ purpose }, seconds);
  const embedder =
    config.embedRuntime === "onnx" && config.embedModelDir !== undefined
      ? await loadOnnxEmbedder({
          dir: config.embedModelDir,
          model: config.embedModel,
          dimensions: config.embedDimensions,
          batchSize: config.embedBatchSize,
          threads: config.embedThreads,
          queryTimeoutMs: config.embedTimeoutMs,
          observe: observeEmbedding,
        })
      : config.ollamaUrl === undefined
        ? null
        : createOllamaEmbedder({
            url: config.ollamaUrl,
            model: config.embedModel,
            dimensions: config.embedDimensions,
            batchSize: config.embedBatchSize,
            concurrency: config.embedConcurrency,
            queryTimeoutMs: config.embedTimeoutMs,
            batchTimeoutMs: config.embedBatchTimeoutMs,
            observe: observeEmbedding,
          });
  metrics = createMetrics(() => countObjectsByTypeAndStatus(store, 2_000));
  const usage = new UsageTracker(
    (counts, at) => incrementUsage(store, counts, at),
    config.usageFlushIntervalMs,
    clock,
    (error) => app.log.warn({ err: error }, "usage counter flush failed; counts kept for the next flush"),
  );
  const policy = new PolicyHolder();

  let initializedFlag = false;
  let closing = false;
  let fill: EmbeddingFill | undefined;
  let rebuild: KnowledgeRebuild | undefined;
  const initialized = (async () => {
    for (let attempt = 1; !closing; attempt += 1) {
      try {
        const generations = await ensureIndices(store, embedder?.model ?? null);
        await policy.load(store);
        const pendingRebuild = new KnowledgeRebuild(store, {
          retryMs: config.rebuildRetryMs,
          keepDays: config.rebuiltIndexKeepDays,
          ...(config.rebuildDocsPerSecond === undefined
            ? {}
            : { docsPerSecond: config.rebuildDocsPerSecond }),
          clock,
          onError: (error) => app.log.warn({ err: error }, "knowledge index rebuild failed; trying again"),
          onRebuilt: (plan, documents) =>
            app.log.info(
              { ...plan, documents },
              "knowledge index rebuilt; the old one is kept for a rollback",
            ),
          onDeleted: (deleted) => app.log.info({ deleted }, "kept knowledge indices deleted"),
        });
        await pendingRebuild.prepare();
        fill = new EmbeddingFill({ store, embedder, clock }, generations, {
          pageSize: config.embedBatchSize * 4,
          retryMs: config.embedFillRetryMs,
          onError: (error) => app.log.warn({ err: error }, "re-embedding paused; trying again"),
          onDone: (retired) =>
            app.log.info({ retired }, "re-embedding finished; the old indices are deleted"),
        });
        if (fill.needed) app.log.info({ embedding: fill.status() }, "embedding model changed; re-embedding");
        fill.start();
        rebuild = pendingRebuild;
        rebuild.start();
        initializedFlag = true;
        app.log.info({ indices: store.indices }, "indices ready");
        return;
      } catch (error) {
        app.log.warn({ err: error, attempt }, "OpenSearch not ready for index set-up; retrying");
        await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 250 * attempt)));
      }
    }
  })();

  const context: CortexContext = {
    config,
    store,
    embedder,
    policy,
    metrics,
    usage,
    retrieval: {
      retrieveTimeoutMs: config.retrieveTimeoutMs,
      recencyHalfLifeDays: config.recencyHalfLifeDays,
      lowConfidenceThreshold: config.lowConfidenceThreshold,
      candidates: config.retrieveCandidates,
      minVectorSimilarity: options.minVectorSimilarity ?? 0.2,
    },
    clock,
    fullRefusals: {},
    isInitialized: () => initializedFlag,
    initialized,
  };
  app.decorate("cortex", context);
  usage.start();

  // A write before the index set-up finished would make OpenSearch auto-create a bare index under an alias's
  // name, without mappings. Writes wait briefly for the set-up, then get 503; reads answer degraded on their own.
  // While the knowledge index is rebuilt after an upgrade its old copy is write-blocked: writes get 503 before
  // they change anything, so none is half-done (the gateway's queue and the operator retry).
  app.addHook("preHandler", async (request) => {
    if (request.method === "GET" || request.method === "HEAD") return;
    if (request.routeOptions.url === routes.retrieve.url) return;
    if (rebuild?.rebuilding && request.routeOptions.url !== routes.migrationsConfirm.url)
      throw serviceUnavailable(rebuild.holdMessage());
    if (initializedFlag) return;
    const ready = await Promise.race([
      initialized.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), writeSetupWaitMs).unref()),
    ]);
    if (!ready) throw serviceUnavailable("Cortex is still setting up its OpenSearch indices; retry shortly");
  });
  app.addHook("onResponse", async (request, reply) => {
    metrics.httpDuration.observe(
      {
        route: request.routeOptions.url ?? "unmatched",
        method: request.method,
        status: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
    // A write stored since the last refusal for want of space: space was freed, writes are accepted again.
    if (request.method === "POST" && reply.statusCode < 300) delete context.fullRefusals.last;
  });

  app.setErrorHandler(errorHandler);

  // Open: liveness, readiness, metrics and the API description. Everything else needs the bearer token.
  await app.register(healthRoutes);
  // The contract's own OpenAPI document of the route table every route above is registered from.
  app.get("/docs/json", async () => openApiDocument());
  const credentials = credentialsOf(config, app);
  app.log.info({ callers: credentials.callers() }, "callers with a credential");
  await authenticated(
    app,
    credentials,
    [
      ingestRoutes,
      retrieveRoutes,
      dimensionsRoutes,
      embeddingsRoutes(() => fill?.status() ?? startingEmbeddings(config, embedder !== null)),
      migrationRoutes(() => rebuild),
      ...(options.plugins ?? []),
    ],
    { ...(config.householdId === undefined ? {} : { householdId: config.householdId }) },
  );

  const refresh =
    config.credentialsDir === undefined
      ? undefined
      : setInterval(() => credentials.refresh(), credentialRefreshMs);
  refresh?.unref();
  app.addHook("onClose", async () => {
    closing = true;
    clearInterval(refresh);
    await fill?.stop();
    await rebuild?.stop();
    await usage.stop().catch((error: unknown) => app.log.warn({ err: error }, "final usage flush failed"));
    await store.client.close();
  });
  return app;
}

/**
 * The callers' credentials: with a credentials folder, its files as read on every refresh (a folder that cannot be
 * read for a moment, while the kubelet swaps a Secret's files, keeps the credentials in force); else the config's.
 */
function credentialsOf(config: CortexConfig, app: FastifyInstance): CallerCredentials {
  const { credentialsDir } = config;
  let last = config.credentials;
  return new CallerCredentials({
    read: () => {
      if (credentialsDir === undefined) return config.credentials;
      try {
        // The same rules as at start: a rotation that shares a value between two callers, or writes a short one,
        // would otherwise hand one caller another's routes.
        const read = callerCredentials.safeParse(readCallerCredentials(credentialsDir));
        if (read.success) last = read.data;
        else
          app.log.error(
            { problems: read.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`) },
            "credentials folder refused; keeping the credentials in force",
          );
      } catch (error) {
        app.log.warn({ err: error }, "credentials folder unreadable; keeping the credentials in force");
      }
      return last;
    },
    overlapMs: config.credentialOverlapSeconds * 1000,
    onRotated: (caller) =>
      app.log.info({ caller }, "caller credential rotated; the old one is accepted for the overlap"),
  });
}
