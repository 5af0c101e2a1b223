/**
 * Entry point of the operator container: load settings and profiles, run until SIGTERM (then stop intake, finish
 * in-flight reconciles, hand back the Lease) or until leadership is lost (exit non-zero; the restart re-campaigns).
 */
import { KubeConfig } from "@kubernetes/client-node";
import { pino } from "pino";
import { loadHardwareProfiles } from "./appliance/hardware-profiles.js";
import { loadSettings } from "./config.js";
import { startOperator } from "./operator.js";

const settings = loadSettings(process.env);
const log = pino({ level: settings.logLevel, base: { pod: settings.identity } });
const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();

const { cortex: outOfClusterCortex, ollama: outOfClusterOllama } = settings.outOfClusterUrls;
const operator = await startOperator({
  kubeConfig,
  log,
  identity: settings.identity,
  leaseNamespace: settings.namespace,
  images: settings.images,
  profiles: loadHardwareProfiles(settings.profilesDir),
  ...(settings.watchNamespaces ? { watchNamespaces: settings.watchNamespaces } : {}),
  metricsNamespaces: settings.metricsNamespaces,
  ...(settings.ingressController ? { ingressController: settings.ingressController } : {}),
  probePort: settings.probePort,
  resyncMs: settings.resyncMs,
  proposalMirrorMs: settings.proposalMirrorMs,
  consistencyCheckMs: settings.consistencyCheckMs,
  ...(outOfClusterCortex ? { cortexUrl: () => outOfClusterCortex } : {}),
  ...(outOfClusterOllama ? { ollamaUrl: () => outOfClusterOllama } : {}),
});
log.info({ namespace: settings.namespace }, "operator started; campaigning for the lease");

let stopping = false;
async function shutdown(signal: string, exitCode: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "stopping: finishing in-flight reconciles");
  // The pod's grace period is 30 s; give up a little before the kubelet's SIGKILL.
  const deadline = setTimeout(() => process.exit(exitCode || 1), 25_000);
  deadline.unref();
  await operator.stop();
  log.info("stopped");
  process.exit(exitCode);
}

process.on("SIGTERM", () => void shutdown("SIGTERM", 0));
process.on("SIGINT", () => void shutdown("SIGINT", 0));
void operator.lostLeadership.then(() => shutdown("lost-lease", 1));
