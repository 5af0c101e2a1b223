/**
 * The Fastify app factory. Routes are plugins over one shared context (store, embedder, policy, metrics, usage);
 * reflection, dream, promotion and archive register theirs the same way through `plugins`.
 */
import swagger from "@fastify/swagger";
import Fastify, {
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyServerOptions,
  LogController,
} from "fastify";
import {
  hasZodFastifySchemaValidationErrors,
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from "fastify-type-provider-zod";
import { bearerMatches, openPaths } from "./auth.js";
import type { CortexConfig } from "./config.js";
import { type CortexMetrics, createMetrics } from "./metrics.js";
import { dimensionsRoutes } from "./routes/dimensions.js";
import { healthRoutes } from "./routes/health.js";
import { ingestRoutes } from "./routes/ingest.js";
import { retrieveRoutes } from "./routes/retrieve.js";
import { PolicyHolder } from "./services/dimensions.js";
import type { RetrievalSettings } from "./services/retrieve.js";
import { UsageTracker } from "./services/usage.js";
import { createOllamaEmbedder, type Embedder } from "./store/embedder.js";
import {
  type CortexStore,
  countObjectsByTypeAndStatus,
  createStore,
  ensureIndices,
  incrementUsage,
  StoreUnavailableError,
} from "./store/opensearch.js";

/** What every route plugin can use, as `app.cortex`. */
/** How long a write waits for the index set-up at start-up before it is refused with 503. */
const writeSetupWaitMs = 10_000;

export interface CortexContext {
  config: CortexConfig;
  store: CortexStore;
  embedder: Embedder | null;
  policy: PolicyHolder;
  metrics: CortexMetrics;
  usage: UsageTracker;
  retrieval: RetrievalSettings;
  clock: () => Date;
  /** True once the indices exist and the stored policy is loaded. */
  isInitialized: () => boolean;
  /** Resolves when initialization succeeded (it retries until then, or until the app closes). */
  initialized: Promise<void>;
}

declare module "fastify" {
  interface FastifyInstance {
    cortex: CortexContext;
  }
}

export interface BuildAppOptions {
  config: CortexConfig;
  /** Route plugins of other modules (reflect, dream, promote, archive), registered after the core routes. */
  plugins?: readonly FastifyPluginAsync[];
  clock?: () => Date;
  logger?: FastifyServerOptions["logger"];
  /** Cosine floor for k-NN candidates. */
  minVectorSimilarity?: number;
}

export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const clock = options.clock ?? (() => new Date());
  const app = Fastify({
    logger: options.logger ?? { level: config.logLevel },
    // One line per request would drown the logs of a service called on every prompt; metrics carry latency.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 16 * 1024 * 1024,
    // Bounded shutdown: in-flight requests finish, idle keep-alive sockets close.
    forceCloseConnections: "idle",
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  const store = createStore({
    url: config.opensearchUrl,
    ...(config.opensearchCredentials ? { credentials: config.opensearchCredentials } : {}),
    indexPrefix: config.indexPrefix,
    embedDimensions: config.embedDimensions,
  });
  let metrics: CortexMetrics | undefined;
  const embedder =
    config.ollamaUrl === undefined
      ? null
      : createOllamaEmbedder({
          url: config.ollamaUrl,
          model: config.embedModel,
          dimensions: config.embedDimensions,
          batchSize: config.embedBatchSize,
          concurrency: config.embedConcurrency,
          queryTimeoutMs: config.embedTimeoutMs,
          batchTimeoutMs: config.embedBatchTimeoutMs,
          observe: (seconds, purpose) => metrics?.embeddingDuration.observe({ purpose }, seconds),
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
  const initialized = (async () => {
    for (let attempt = 1; !closing; attempt += 1) {
      try {
        await ensureIndices(store);
        await policy.load(store);
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
    isInitialized: () => initializedFlag,
    initialized,
  };
  app.decorate("cortex", context);
  usage.start();

  await app.register(swagger, {
    openapi: {
      info: {
        title: "Remram Cortex",
        version: "1.0.0",
        description: "Knowledge authority: ingest, retrieve, dimensions.",
      },
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });

  app.addHook("onRequest", async (request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    if (openPaths.has(path)) return;
    if (!bearerMatches(request.headers.authorization, config.token)) {
      await reply
        .code(401)
        .header("WWW-Authenticate", 'Bearer realm="cortex"')
        .send({ statusCode: 401, error: "Unauthorized", message: "missing or wrong bearer token" });
    }
  });
  // A write before the index set-up finished would make OpenSearch auto-create a bare index under an alias's
  // name, without mappings. Writes wait briefly for the set-up, then get 503; reads answer degraded on their own.
  app.addHook("preHandler", async (request, reply) => {
    if (initializedFlag || request.method === "GET" || request.method === "HEAD") return;
    if (request.routeOptions.url === "/retrieve") return;
    const ready = await Promise.race([
      initialized.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), writeSetupWaitMs).unref()),
    ]);
    if (!ready) {
      await reply.code(503).header("Retry-After", "5").send({
        statusCode: 503,
        error: "Service Unavailable",
        message: "Cortex is still setting up its OpenSearch indices; retry shortly",
      });
    }
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
  });

  app.setErrorHandler(async (error, request, reply) => {
    if (hasZodFastifySchemaValidationErrors(error)) {
      const details = error.validation.map(
        (issue) =>
          `${error.validationContext ?? "body"}${issue.instancePath.replaceAll("/", ".")}: ${issue.message}`,
      );
      return reply.code(400).send({ statusCode: 400, error: "Bad Request", message: details.join("; ") });
    }
    if (error instanceof StoreUnavailableError) {
      request.log.warn({ err: error }, "OpenSearch unavailable");
      return reply
        .code(503)
        .header("Retry-After", "5")
        .send({
          statusCode: 503,
          error: "Service Unavailable",
          message: `OpenSearch unavailable: ${error.message}`,
        });
    }
    const statusCode = (error as { statusCode?: number }).statusCode ?? 500;
    if (statusCode >= 500) request.log.error({ err: error }, "request failed");
    const message = error instanceof Error ? error.message : String(error);
    return reply
      .code(statusCode)
      .send({ statusCode, error: statusCode >= 500 ? "Internal Server Error" : "Bad Request", message });
  });

  await app.register(healthRoutes);
  await app.register(ingestRoutes);
  await app.register(retrieveRoutes);
  await app.register(dimensionsRoutes);
  for (const plugin of options.plugins ?? []) await app.register(plugin);

  app.get("/docs/json", { schema: { hide: true } }, async () => app.swagger());

  app.addHook("onClose", async () => {
    closing = true;
    await usage.stop().catch((error: unknown) => app.log.warn({ err: error }, "final usage flush failed"));
    await store.client.close();
  });
  return app;
}
