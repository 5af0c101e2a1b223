/**
 * The appliance's conditions, computed from what the operator observed (pure), with ApplianceReason's reasons.
 * Ready summarises the components, Progressing is True only while rolling toward a new generation, and Degraded
 * only once Ready has been False past a threshold.
 */
import type { Condition } from "../api/v1alpha1/common.js";
import {
  ApplianceReason,
  type ModelRole,
  type RemramApplianceSpec,
  type RemramApplianceStatus,
} from "../api/v1alpha1/remram-appliance.js";
import { type ConditionInput, summarizeReady } from "../runtime/conditions.js";
import type { RuntimeClassState } from "./gpu.js";
import type { GpuInventory } from "./hardware-profiles.js";
import { type PullProgress, pullingMessage } from "./pull-progress.js";

export const requiredMaxMapCount = 262144;
export const degradedAfterMs = 10 * 60_000;

/** What the operator saw of one workload (Deployment or StatefulSet). */
export interface WorkloadObservation {
  exists: boolean;
  /** The controller has seen the latest spec and every replica runs it. */
  upToDate: boolean;
  available: boolean;
}

interface WorkloadLike {
  metadata?: { generation?: number };
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    readyReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
  };
}

export function observeWorkload(workload: WorkloadLike | undefined): WorkloadObservation {
  if (workload === undefined) return { exists: false, upToDate: false, available: false };
  const status = workload.status ?? {};
  const wanted = workload.spec?.replicas ?? 1;
  const seen = (status.observedGeneration ?? 0) >= (workload.metadata?.generation ?? 1);
  const revisionsMatch =
    status.updateRevision === undefined || status.currentRevision === status.updateRevision;
  const upToDate = seen && (status.updatedReplicas ?? 0) >= wanted && revisionsMatch;
  const ready = status.availableReplicas ?? status.readyReplicas ?? 0;
  return { exists: true, upToDate, available: ready >= wanted };
}

export interface ModelObservation {
  required: { role: ModelRole; name: string }[];
  /** Names /api/tags listed; undefined when Ollama could not be asked. */
  listed?: { name: string; digest?: string }[];
  /** Why the models could not be checked (Ollama unreachable or not available yet). */
  pullError?: string;
  /** The last failure of a missing model's pull, by model name. */
  pullErrors?: ReadonlyMap<string, string>;
  /** The published progress of each running or failed pull, by model name. */
  pulls?: ReadonlyMap<string, PullProgress>;
}

export interface ApplianceObservation {
  spec: RemramApplianceSpec;
  gpu: GpuInventory;
  useGpu: boolean;
  /** The RuntimeClass for GPU pods; absent means usable (callers that do not look). */
  runtimeClass?: RuntimeClassState;
  /** The host's vm.max_map_count as the OpenSearch pod's init container read it. */
  hostMaxMapCount?: number;
  workloads: Record<"opensearch" | "ollama" | "cortex" | "gateway", WorkloadObservation>;
  models: ModelObservation;
  /** What keeps spec.escalation.cloud's key from the gateway (no Secret, no such key); undefined when found. */
  cloudKeyProblem?: string;
  /** OpenSearchReady of an external cluster, from the operator's own request to it (external-opensearch.ts). */
  externalOpenSearch?: ConditionInput;
}

const conditionTitles = {
  opensearch: "OpenSearchReady",
  ollama: "OllamaReady",
  cortex: "CortexReady",
  gateway: "GatewayReady",
} as const;

/** Why pods cannot use the GPU through the RuntimeClass, and what fixes it; undefined when they can. */
function runtimeProblem(runtimeClass: RuntimeClassState | undefined): string | undefined {
  if (runtimeClass === undefined || runtimeClass.status === "Found") return undefined;
  const fix =
    "install the NVIDIA container toolkit and restart k3s (it then configures the nvidia runtime), or name the RuntimeClass in spec.ollama.runtimeClassName";
  if (runtimeClass.status === "NotFound") {
    return `RuntimeClass ${runtimeClass.name} does not exist: ${fix}`;
  }
  return `RuntimeClass ${runtimeClass.name} needs runtime handler ${runtimeClass.handler}, which ${runtimeClass.nodes.join(", ")} does not report: ${fix}`;
}

function gpuCondition(observation: ApplianceObservation): ConditionInput {
  const mode = observation.spec.ollama.gpu;
  const { count, product } = observation.gpu;
  if (mode === "disabled") {
    return {
      type: "GPUAvailable",
      status: "False",
      reason: ApplianceReason.GPUDisabled,
      message: "spec.ollama.gpu is disabled",
    };
  }
  const problem = runtimeProblem(observation.runtimeClass);
  if (problem !== undefined && mode === "required") {
    return {
      type: "GPUAvailable",
      status: "False",
      reason:
        observation.runtimeClass?.status === "NotFound"
          ? ApplianceReason.RuntimeClassNotFound
          : ApplianceReason.RuntimeHandlerNotFound,
      message: `spec.ollama.gpu is required, but ${problem}; Ollama waits`.slice(0, 1024),
    };
  }
  if (problem !== undefined && (count > 0 || observation.gpu.hardwareLabelled)) {
    const found = count > 0 ? `${count} nvidia.com/gpu allocatable` : "NVIDIA hardware labelled";
    return {
      type: "GPUAvailable",
      status: "False",
      reason: ApplianceReason.NoGPURuntimeCPUFallback,
      message: `${found}, but ${problem}; Ollama runs on the CPU`.slice(0, 1024),
    };
  }
  if (count > 0) {
    return {
      type: "GPUAvailable",
      status: "True",
      reason: ApplianceReason.GPUFound,
      message: `${count} nvidia.com/gpu allocatable${product ? ` (${product})` : ""}`,
    };
  }
  if (mode === "required") {
    return {
      type: "GPUAvailable",
      status: "False",
      reason: ApplianceReason.GPURequiredButMissing,
      message: "spec.ollama.gpu is required but no node offers nvidia.com/gpu; Ollama stays pending",
    };
  }
  return {
    type: "GPUAvailable",
    status: "False",
    reason: ApplianceReason.NoGPUCPUFallback,
    message: "no node offers nvidia.com/gpu; Ollama runs on the CPU with the profile's models",
  };
}

function hostCondition(observation: ApplianceObservation): ConditionInput {
  const type = "HostPrerequisitesMet";
  if (observation.spec.opensearch.mode === "external") {
    return {
      type,
      status: "True",
      reason: ApplianceReason.ExternalOpenSearch,
      message: "OpenSearch runs elsewhere",
    };
  }
  const value = observation.hostMaxMapCount;
  if (value === undefined) {
    return {
      type,
      status: "Unknown",
      reason: ApplianceReason.NotMeasured,
      message: "vm.max_map_count not read yet (the OpenSearch pod's host-check init container reports it)",
    };
  }
  if (value < requiredMaxMapCount) {
    return {
      type,
      status: "False",
      reason: ApplianceReason.VmMaxMapCountTooLow,
      message: `host vm.max_map_count is ${value}; OpenSearch needs >= ${requiredMaxMapCount} (set it in /etc/sysctl.d)`,
    };
  }
  return {
    type,
    status: "True",
    reason: ApplianceReason.VmMaxMapCountSufficient,
    message: `vm.max_map_count is ${value}`,
  };
}

function workloadCondition(
  component: keyof typeof conditionTitles,
  observation: WorkloadObservation,
): ConditionInput {
  const type = conditionTitles[component];
  if (!observation.exists)
    return { type, status: "Unknown", reason: ApplianceReason.NotCreated, message: "not created yet" };
  if (observation.available && observation.upToDate) {
    return { type, status: "True", reason: ApplianceReason.Available, message: "available" };
  }
  if (!observation.upToDate)
    return { type, status: "Unknown", reason: ApplianceReason.RollingOut, message: "rolling out" };
  return { type, status: "False", reason: ApplianceReason.NotAvailable, message: "no ready replica" };
}

function modelsCondition(models: ModelObservation): ConditionInput {
  const type = "ModelsReady";
  if (models.listed === undefined) {
    return {
      type,
      status: "Unknown",
      reason: ApplianceReason.OllamaUnreachable,
      message: models.pullError ?? "Ollama has not answered /api/tags yet",
    };
  }
  const listed = new Set(models.listed.flatMap((model) => [model.name, model.name.replace(/:latest$/, "")]));
  const missing = models.required.filter(
    (model) => !listed.has(model.name) && !listed.has(`${model.name}:latest`),
  );
  if (missing.length === 0) {
    return {
      type,
      status: "True",
      reason: ApplianceReason.ModelsListed,
      message: "every required model is listed",
    };
  }
  const names = [...new Set(missing.map((model) => model.name))];
  const failed = names.filter((name) => models.pullErrors?.has(name));
  if (failed.length > 0) {
    const pulling = names.filter((name) => !models.pullErrors?.has(name));
    const failures = failed.map((name) => `${name}: ${models.pullErrors?.get(name)}`).join("; ");
    return {
      type,
      status: "False",
      reason: ApplianceReason.ModelPullFailed,
      message: pulling.length > 0 ? `${failures}; ${pullingMessage(pulling, models.pulls)}` : failures,
    };
  }
  return {
    type,
    status: "Unknown",
    reason: ApplianceReason.ModelsPulling,
    message: pullingMessage(names, models.pulls),
  };
}

/** Whether a turn can be escalated to the cloud model, and if not, why. Informational: it never blocks Ready. */
function escalationCondition(observation: ApplianceObservation): ConditionInput {
  const type = "EscalationReady";
  const { enabled, cloud } = observation.spec.escalation;
  if (!enabled || cloud === undefined) {
    return {
      type,
      status: "False",
      reason: ApplianceReason.EscalationOff,
      message: cloud === undefined ? "no cloud model: every turn stays on the box" : "escalation is disabled",
    };
  }
  if (observation.cloudKeyProblem !== undefined) {
    return {
      type,
      status: "False",
      reason: ApplianceReason.CloudKeyMissing,
      message: `${observation.cloudKeyProblem}: every turn stays on the box until the key is there`.slice(
        0,
        1024,
      ),
    };
  }
  return {
    type,
    status: "True",
    reason: ApplianceReason.CloudModelConfigured,
    message: `turns may escalate to ${cloud.provider}/${cloud.model}`.slice(0, 1024),
  };
}

/** Every condition of the appliance, Ready first. */
export function applianceConditions(observation: ApplianceObservation): ConditionInput[] {
  const components: ConditionInput[] = [
    hostCondition(observation),
    observation.spec.opensearch.mode === "embedded"
      ? workloadCondition("opensearch", observation.workloads.opensearch)
      : (observation.externalOpenSearch ?? {
          type: "OpenSearchReady",
          status: "Unknown",
          reason: ApplianceReason.NotMeasured,
          message: "the external cluster has not been asked yet",
        }),
    workloadCondition("ollama", observation.workloads.ollama),
    modelsCondition(observation.models),
    workloadCondition("cortex", observation.workloads.cortex),
    workloadCondition("gateway", observation.workloads.gateway),
  ];
  const gpu = gpuCondition(observation);
  // A missing GPU blocks Ready only when the spec demands one; the CPU fallback is a working appliance. A host
  // value nobody could read yet (no init container report) does not block either: a measured low value does.
  const readyInputs = [
    ...(observation.spec.ollama.gpu === "required" ? [gpu] : []),
    ...components.filter(
      (condition) => !(condition.type === "HostPrerequisitesMet" && condition.status === "Unknown"),
    ),
  ];
  const rolling = Object.values(observation.workloads).some(
    (workload) => workload.exists && !workload.upToDate,
  );
  const progressing: ConditionInput = rolling
    ? {
        type: "Progressing",
        status: "True",
        reason: ApplianceReason.RollingOut,
        message: "rolling out the latest spec",
      }
    : {
        type: "Progressing",
        status: "False",
        reason: ApplianceReason.Steady,
        message: "no rollout in progress",
      };
  return [
    summarizeReady(readyInputs, "every component is available"),
    progressing,
    gpu,
    ...components,
    escalationCondition(observation),
  ];
}

/** Degraded = Ready has stayed False longer than the threshold (no flapping on a normal rollout). */
export function degradedCondition(merged: readonly Condition[], nowMs: number): ConditionInput {
  const ready = merged.find((condition) => condition.type === "Ready");
  const since = ready ? Date.parse(ready.lastTransitionTime) : nowMs;
  if (ready?.status === "False" && nowMs - since >= degradedAfterMs) {
    return {
      type: "Degraded",
      status: "True",
      reason: ApplianceReason.PersistentFailure,
      message: `not ready for more than ${degradedAfterMs / 60_000} min: ${ready.message}`.slice(0, 1024),
    };
  }
  return {
    type: "Degraded",
    status: "False",
    reason: ApplianceReason.Steady,
    message: "no persistent failure",
  };
}

/** A flip to False is a Warning, except for abnormal-true Degraded, where True is the bad news. */
export function eventType(condition: Condition): "Normal" | "Warning" {
  if (condition.type === "Degraded") return condition.status === "True" ? "Warning" : "Normal";
  if (condition.type === "Progressing") return "Normal";
  return condition.status === "False" ? "Warning" : "Normal";
}

/** status.models: each required model, when it was first seen pulled, and a missing one's pull (pure). */
export function modelStatuses(
  required: ModelObservation["required"],
  report: Omit<ModelObservation, "required">,
  previous: RemramApplianceStatus["models"],
  nowIso: string,
): NonNullable<RemramApplianceStatus["models"]> {
  const listed = new Map((report.listed ?? []).map((model) => [model.name.replace(/:latest$/, ""), model]));
  return required.map((model) => {
    const found = listed.get(model.name.replace(/:latest$/, ""));
    const previousModel = previous?.find(
      (entry) => entry.role === model.role && (model.role !== "agent" || entry.name === model.name),
    );
    const pulledAt = found
      ? previousModel?.name === model.name && previousModel.pulledAt
        ? previousModel.pulledAt
        : nowIso
      : undefined;
    const progress = found ? undefined : report.pulls?.get(model.name);
    const pullError = found ? undefined : report.pullErrors?.get(model.name);
    return {
      name: model.name,
      role: model.role,
      ...(found?.digest ? { digest: found.digest.slice(0, 128) } : {}),
      ...(pulledAt ? { pulledAt } : {}),
      ...(progress !== undefined || pullError !== undefined
        ? {
            pull: {
              status: (progress?.status ?? "starting").slice(0, 128),
              completedBytes: progress?.completedBytes ?? 0,
              totalBytes: progress?.totalBytes ?? 0,
              percent: progress?.percent ?? 0,
              ...(pullError !== undefined ? { error: pullError.slice(0, 512) } : {}),
            },
          }
        : {}),
    };
  });
}
