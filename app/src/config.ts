/**
 * remram-app's configuration, from the environment the operator's Deployment sets. The Cortex credential is read from
 * a mounted Secret's file, never from an environment variable, so it appears in no process listing or pod spec.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";

export const appConfig = z
  .object({
    host: z.string().min(1).default("0.0.0.0"),
    /**
     * Where the pages and the API live: "/" or a path like "/remram/" (the appliance's front door routes that prefix
     * of the gateway's host to the app). /healthz stays at the root for the kubelet.
     */
    basePath: z
      .string()
      .max(200)
      .regex(/^\/([a-z0-9][a-z0-9._-]*\/)*$/, 'a path that starts and ends with "/", such as /remram/')
      .default("/"),
    port: z.coerce.number().int().min(0).max(65_535).default(8080),
    /** The appliance this app belongs to: its namespace and RemramAppliance name. */
    namespace: z.string().min(1),
    appliance: z.string().min(1),
    /** The agent whose archived conversations the person sees (OpenClaw's agent id). */
    agentId: z.string().min(1).default("main"),
    cortexUrl: z.url(),
    /** The hooks plugin's /metrics in the gateway pod (the diagnostics page's capture backlog and escalations). */
    gatewayMetricsUrl: z.url().optional(),
    /** A Prometheus that scrapes the appliance; the page then plots a day of its data. */
    prometheusUrl: z.url().optional(),
    /** How often the app scrapes the components' /metrics itself, for the page's plots without Prometheus. */
    metricsIntervalMs: z.int().min(1_000).max(3_600_000).default(60_000),
    /** The app's own credential for Cortex (the `app` caller). */
    cortexToken: z.string().min(16),
    /** A kubeconfig file for the app's own identity; unset in a pod, where the ServiceAccount's is used. */
    kubeconfig: z.string().min(1).optional(),
    /** Secure cookies: off only for plain-HTTP tests on loopback. */
    secureCookies: z.boolean().default(true),
    /** How long a checked credential is trusted before Kubernetes is asked again (a removed member's limit). */
    identityCacheMs: z.int().min(0).max(300_000).default(30_000),
    logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  })
  .strict();
export type AppConfig = z.output<typeof appConfig>;
export type AppConfigInput = z.input<typeof appConfig>;

/** The config from REMRAM_APP_* variables; the Cortex credential from the file REMRAM_APP_CORTEX_TOKEN_FILE names. */
export function configFromEnv(env: NodeJS.ProcessEnv): AppConfig {
  const tokenFile = env.REMRAM_APP_CORTEX_TOKEN_FILE;
  if (tokenFile === undefined) throw new Error("REMRAM_APP_CORTEX_TOKEN_FILE is not set");
  return appConfig.parse({
    host: env.REMRAM_APP_HOST,
    basePath: env.REMRAM_APP_BASE_PATH,
    port: env.REMRAM_APP_PORT,
    namespace: env.REMRAM_APP_NAMESPACE,
    appliance: env.REMRAM_APP_APPLIANCE,
    agentId: env.REMRAM_APP_AGENT_ID,
    cortexUrl: env.REMRAM_APP_CORTEX_URL,
    cortexToken: readFileSync(tokenFile, "utf8").trim(),
    gatewayMetricsUrl: env.REMRAM_APP_GATEWAY_METRICS_URL,
    prometheusUrl: env.REMRAM_APP_PROMETHEUS_URL || undefined,
    metricsIntervalMs:
      env.REMRAM_APP_METRICS_INTERVAL_MS === undefined
        ? undefined
        : Number(env.REMRAM_APP_METRICS_INTERVAL_MS),
    kubeconfig: env.REMRAM_APP_KUBECONFIG,
    secureCookies: env.REMRAM_APP_INSECURE_COOKIES !== "true",
    logLevel: env.REMRAM_APP_LOG_LEVEL,
  });
}
