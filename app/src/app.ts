/**
 * remram-app's HTTP server: a JSON API under /api for the browser pages and `kubectl remram knowledge`, every route
 * but sign-in behind the signed-in scope (auth.ts). The app holds no data of its own: knowledge comes from Cortex
 * with the app's credential, proposals from Kubernetes with the person's.
 */
import cookie from "@fastify/cookie";
import type { KubeConfig } from "@kubernetes/client-node";
import Fastify, { type FastifyInstance } from "fastify";
import { serializerCompiler, validatorCompiler } from "fastify-type-provider-zod";
import { signedIn } from "./auth.js";
import type { AppConfig } from "./config.js";
import { CortexClient } from "./cortex-client.js";
import { DiagnosticsMetrics } from "./diagnostics/metrics.js";
import { ScrapedMetrics } from "./diagnostics/scraped.js";
import { AppError, errorBody } from "./errors.js";
import { Identities } from "./identity/identify.js";
import { ownKubeConfig } from "./kube.js";
import { diagnosticsRoutes } from "./routes/diagnostics.js";
import { knowledgeRoutes } from "./routes/knowledge.js";
import { proposalRoutes } from "./routes/proposals.js";
import { meRoutes, sessionRoutes } from "./routes/session.js";
import { webPages } from "./static.js";

export interface BuildAppOptions {
  config: AppConfig;
  /** The app's own Kubernetes identity; from config.kubeconfig or the pod's ServiceAccount when not given. */
  kubeConfig?: KubeConfig;
  logger?: boolean;
  /** The built browser pages (`npm run build:web -w app`); app/dist/web when not given. */
  webDir?: string;
}

export interface AppContext {
  config: AppConfig;
  cortex: CortexClient;
  identities: Identities;
  metrics: DiagnosticsMetrics;
}

declare module "fastify" {
  interface FastifyInstance {
    remram: AppContext;
  }
}

export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const app = Fastify({
    logger:
      options.logger === false
        ? false
        : {
            level: config.logLevel,
            // The path only: a query holds what a person searched for. Headers (their token) are never logged.
            serializers: {
              req: (request: { method: string; url: string }) => ({
                method: request.method,
                url: request.url.split("?")[0],
              }),
            },
          },
    bodyLimit: 64 * 1024,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  const own = options.kubeConfig ?? ownKubeConfig(config.kubeconfig);
  const context: AppContext = {
    config,
    cortex: new CortexClient({ url: config.cortexUrl, token: config.cortexToken }),
    identities: new Identities({
      own,
      namespace: config.namespace,
      appliance: config.appliance,
      cacheMs: config.identityCacheMs,
    }),
    metrics: new DiagnosticsMetrics(
      new ScrapedMetrics({
        endpoints: {
          cortex: new URL(
            "metrics",
            config.cortexUrl.endsWith("/") ? config.cortexUrl : `${config.cortexUrl}/`,
          ).href,
          ...(config.gatewayMetricsUrl === undefined ? {} : { gateway: config.gatewayMetricsUrl }),
        },
        intervalMs: config.metricsIntervalMs,
        keepMs: 86_400_000,
      }),
      config.prometheusUrl === undefined
        ? undefined
        : { url: config.prometheusUrl, namespace: config.namespace },
    ),
  };
  app.decorate("remram", context);
  app.addHook("onReady", async () => context.metrics.scraped.start());
  app.addHook("onClose", async () => context.metrics.scraped.stop());
  app.setErrorHandler(async (error, request, reply) => {
    if (error instanceof AppError)
      return reply.code(error.statusCode).send(errorBody(error.statusCode, error.message));
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500)
      return reply.code(status).send(errorBody(status, (error as Error).message));
    request.log.error({ err: error }, "request failed");
    return reply.code(500).send(errorBody(500, "the app failed; its log says why"));
  });
  await app.register(cookie);
  const { basePath } = config;
  // Everything under the base path ("/remram/" in the appliance); "" at the root, as Fastify's prefixes take it.
  const prefix = basePath.replace(/\/$/, "");
  await app.register(webPages, { dir: options.webDir, basePath });
  app.get("/healthz", async () => ({ status: "ok" }));
  await app.register(sessionRoutes, { prefix });
  await signedIn(
    app,
    context.identities,
    [meRoutes, knowledgeRoutes, proposalRoutes, diagnosticsRoutes],
    prefix,
  );
  return app;
}
