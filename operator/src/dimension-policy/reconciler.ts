/**
 * DimensionPolicy → PUT Cortex /dimensions. Synced carries the outcome; appliedHash is Cortex's hash of the policy
 * in force. A finalizer resets Cortex to the default policy when the object is deleted. Cortex down → Synced=False
 * (CortexUnavailable) and the error goes back to the work queue, which backs off: no hot loop. A policy Cortex
 * calls invalid (400) → Synced=False (Rejected), not retried before the object changes or the periodic resync.
 * One policy per appliance (holder.ts): a second one for the same appliance → Synced=False (DuplicatePolicy), never
 * sent to Cortex, and its deletion leaves Cortex alone.
 */
import type { DimensionPolicyInput } from "@remram/contract";
import type { Logger } from "pino";
import {
  DimensionPolicyReason,
  type DimensionPolicyStatus,
  dimensionPolicySpec,
} from "../api/v1alpha1/dimension-policy.js";
import { CortexRejectedError, CortexUnavailableError } from "../cortex/client.js";
import type { CortexDirectory } from "../cortex/directory.js";
import type { Cache } from "../runtime/cache.js";
import { type ConditionInput, mergeConditions, transitions } from "../runtime/conditions.js";
import type { ReconcileResult } from "../runtime/controller.js";
import type { EventRecorder } from "../runtime/events.js";
import { type KubeClient, type KubeObject, objectPath } from "../runtime/kube-client.js";
import { splitKey } from "../runtime/owner.js";
import { applyStatusIfChanged, conditionTime } from "../runtime/status-writer.js";
import { parseSpec, TerminalError } from "../runtime/terminal-error.js";
import { dimensionFinalizer, policyHolder } from "./holder.js";

export { dimensionFinalizer };

export interface DimensionPolicyObject extends KubeObject {
  spec?: unknown;
  status?: DimensionPolicyStatus;
}

export interface DimensionPolicyDeps {
  client: KubeClient;
  policies: Cache<DimensionPolicyObject>;
  cortex: CortexDirectory;
  events: EventRecorder;
  now: () => number;
  log: Logger;
}

/** The body Cortex takes: the spec without the appliance reference. */
export function dimensionsBody(spec: ReturnType<typeof dimensionPolicySpec.parse>): DimensionPolicyInput {
  const { applianceRef: _applianceRef, ...body } = spec;
  return body;
}

export class DimensionPolicyReconciler {
  constructor(private readonly deps: DimensionPolicyDeps) {}

  async reconcile(key: string): Promise<ReconcileResult | undefined> {
    const { namespace, name } = splitKey(key);
    const policy = this.deps.policies.get(namespace, name);
    if (policy === undefined) return undefined;
    const spec = parseSpec(dimensionPolicySpec, policy.spec);
    const holder = policyHolder(this.deps.policies.list(namespace), spec.applianceRef.name);
    const other = holder !== undefined && holder.metadata.name !== name ? holder.metadata.name : undefined;
    if (policy.metadata.deletionTimestamp !== undefined) {
      await this.deregister(policy, namespace, spec.applianceRef.name, other === undefined);
      return undefined;
    }
    if (other !== undefined) return this.refuseDuplicate(policy, spec.applianceRef.name, other);
    if (!(policy.metadata.finalizers ?? []).includes(dimensionFinalizer)) {
      // JSON patch appends our entry without rewriting (and so never dropping) other controllers' finalizers.
      await this.deps.client.jsonPatch(
        objectPath(policy),
        policy.metadata.finalizers === undefined
          ? [{ op: "add", path: "/metadata/finalizers", value: [dimensionFinalizer] }]
          : [{ op: "add", path: "/metadata/finalizers/-", value: dimensionFinalizer }],
      );
    }
    const generation = policy.metadata.generation ?? 1;
    const synced = policy.status?.conditions?.find((condition) => condition.type === "Synced");
    let outcome: ConditionInput;
    let appliedHash = policy.status?.appliedHash;
    let failure: Error | undefined;
    try {
      const cortex = await this.deps.cortex.clientFor(namespace, spec.applianceRef.name);
      const upToDate = synced?.status === "True" && policy.status?.observedGeneration === generation;
      // A Cortex that cannot say what it holds gets the policy again (PUT is idempotent) rather than a False.
      const inForce = upToDate ? await cortex.currentHash().catch(() => undefined) : undefined;
      if (!upToDate || inForce !== appliedHash) {
        appliedHash = (await cortex.putDimensions(dimensionsBody(spec))).appliedHash;
      }
      outcome = {
        type: "Synced",
        status: "True",
        reason: DimensionPolicyReason.Applied,
        message: "Cortex holds this policy",
      };
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
      // Cortex refused the policy itself: the same spec would be refused again.
      if (error instanceof CortexRejectedError && error.status === 400) {
        failure = new TerminalError(failure.message, { cause: error });
      }
      outcome =
        error instanceof CortexUnavailableError
          ? {
              type: "Synced",
              status: "False",
              reason: DimensionPolicyReason.CortexUnavailable,
              message: failure.message.slice(0, 1024),
            }
          : {
              type: "Synced",
              status: "False",
              reason: DimensionPolicyReason.Rejected,
              message: failure.message.slice(0, 1024),
            };
    }
    await this.writeStatus(policy, outcome, appliedHash);
    if (failure !== undefined) throw failure;
    return undefined;
  }

  /** A second policy for an appliance: refused, not sent to Cortex, and no longer claiming Cortex's hash. */
  private async refuseDuplicate(
    policy: DimensionPolicyObject,
    appliance: string,
    holder: string,
  ): Promise<undefined> {
    await this.writeStatus(
      policy,
      {
        type: "Synced",
        status: "False",
        reason: DimensionPolicyReason.DuplicatePolicy,
        message: `appliance ${appliance} takes its policy from DimensionPolicy ${holder}; one policy per appliance, named after it: move these settings there and delete this one`,
      },
      undefined,
    );
    return undefined;
  }

  /** Synced (and Ready, the same) with the hash, and an Event when Synced changes. */
  private async writeStatus(
    policy: DimensionPolicyObject,
    outcome: ConditionInput,
    appliedHash: string | undefined,
  ): Promise<void> {
    const generation = policy.metadata.generation ?? 1;
    const ready: ConditionInput = { ...outcome, type: "Ready" };
    const conditions = mergeConditions(
      policy.status?.conditions,
      [ready, outcome],
      generation,
      conditionTime(this.deps.now()),
    );
    // When Cortex last accepted a different policy; a re-confirmation of the same hash keeps the old time.
    const newlyApplied = outcome.status === "True" && appliedHash !== policy.status?.appliedHash;
    const lastSyncTime =
      newlyApplied || (outcome.status === "True" && policy.status?.lastSyncTime === undefined)
        ? conditionTime(this.deps.now())
        : policy.status?.lastSyncTime;
    const status: DimensionPolicyStatus = {
      observedGeneration: generation,
      conditions,
      ...(appliedHash ? { appliedHash } : {}),
      ...(lastSyncTime ? { lastSyncTime } : {}),
    };
    await applyStatusIfChanged(this.deps.client, policy, status);
    for (const changed of transitions(policy.status?.conditions, conditions)) {
      if (changed.type !== "Synced") continue;
      await this.deps.events.record(policy, {
        type: changed.status === "True" ? "Normal" : "Warning",
        reason: changed.status === "True" ? "PolicySynced" : changed.reason,
        action: "SyncDimensions",
        note: changed.message,
      });
    }
  }

  /** Only the policy in force resets Cortex: a refused duplicate going away must not wipe the holder's policy. */
  private async deregister(
    policy: DimensionPolicyObject,
    namespace: string,
    appliance: string,
    inForce: boolean,
  ): Promise<void> {
    const finalizers = policy.metadata.finalizers ?? [];
    const index = finalizers.indexOf(dimensionFinalizer);
    if (index < 0) return;
    if (inForce) await this.resetCortex(namespace, appliance);
    // The test op makes the removal fail (and retry) if the list changed since we read it.
    await this.deps.client.jsonPatch(objectPath(policy), [
      { op: "test", path: `/metadata/finalizers/${index}`, value: dimensionFinalizer },
      { op: "remove", path: `/metadata/finalizers/${index}` },
    ]);
  }

  private async resetCortex(namespace: string, appliance: string): Promise<void> {
    try {
      const cortex = await this.deps.cortex.clientFor(namespace, appliance);
      await cortex.putDimensions({});
    } catch (error) {
      // An appliance that is gone has no Cortex to clean; anything else is retried.
      const applianceGone = error instanceof CortexUnavailableError && /does not exist/.test(error.message);
      if (!applianceGone) throw error;
    }
  }
}
