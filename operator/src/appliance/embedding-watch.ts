/**
 * Whether an appliance's vectors are current: the operator asks Cortex (GET /admin/embeddings) in the background
 * and reports status.embeddings and the EmbeddingsCurrent condition. After a change of spec.ollama.models'
 * embedding model or dimensions Cortex re-embeds everything; the operator asks every 15 s while that runs (or
 * while Cortex still reports another model than the spec's), so a person watching `kubectl get remramappliance -w`
 * sees it move, and hourly once it is done.
 */
import type { EmbeddingStatus } from "@remram/contract";
import type { Logger } from "pino";
import { ApplianceReason, type RemramApplianceStatus } from "../api/v1alpha1/remram-appliance.js";
import type { ConditionInput } from "../runtime/conditions.js";

export type EmbeddingsStatus = NonNullable<RemramApplianceStatus["embeddings"]>;
export type ReadEmbeddings = (namespace: string, name: string) => Promise<EmbeddingStatus>;

export const conditionType = "EmbeddingsCurrent";
/** How often Cortex is asked while a re-embedding runs (or Cortex is still starting). */
export const movingPollMs = 15_000;
/** How often once the vectors are current: a model change restarts Cortex, which the reconcile sees anyway. */
export const settledPollMs = 3_600_000;

export function embeddingsStatus(status: EmbeddingStatus): EmbeddingsStatus {
  const { replacing, waiting } = status;
  return {
    ...(status.model === null ? {} : { model: status.model }),
    dimensions: status.dimensions,
    state: status.state,
    ...(replacing ? { replacing: `${replacing.model} (${replacing.dimensions} dimensions)` } : {}),
    done: status.objects.done + status.chunks.done,
    total: status.objects.total + status.chunks.total,
    ...(waiting ? { waiting } : {}),
  };
}

export function embeddingsCondition(status: EmbeddingsStatus | undefined): ConditionInput {
  const base = { type: conditionType };
  if (status === undefined || status.state === "starting") {
    return {
      ...base,
      status: "Unknown",
      reason: ApplianceReason.NotCheckedYet,
      message: "asked once Cortex has set up its indices",
    };
  }
  if (status.state === "none") {
    return {
      ...base,
      status: "True",
      reason: ApplianceReason.NoEmbeddingModel,
      message: "no embedding model: retrieval is by words only",
    };
  }
  const model = `${status.model} (${status.dimensions} dimensions)`;
  if (status.state === "current") {
    return {
      ...base,
      status: "True",
      reason: ApplianceReason.EmbeddingsCurrent,
      message: `every stored object and chunk has its vector of ${model}`,
    };
  }
  const percent = status.total === 0 ? 0 : Math.floor((status.done / status.total) * 100);
  const waiting = status.waiting === undefined ? "" : `; paused: ${status.waiting}`;
  return {
    ...base,
    status: "False",
    reason: ApplianceReason.Reembedding,
    message:
      `re-embedding with ${model}${status.replacing ? ` instead of ${status.replacing}` : ""}: ${status.done} of ${status.total} (${percent}%); what is not re-embedded yet is found by its words only${waiting}`.slice(
        0,
        1024,
      ),
  };
}

interface WatchState {
  reading: boolean;
  lastReadMs?: number;
  status?: EmbeddingsStatus;
}

export class EmbeddingWatch {
  private readonly watched = new Map<string, WatchState>();

  constructor(
    private readonly options: {
      read: ReadEmbeddings;
      ignoreDeployment?: boolean;
      now: () => number;
      /** Called with the appliance's key when a read settles (requeue it). */
      settled: (key: string) => void;
      log: Logger;
    },
  ) {}

  /** `wanted`: the model and dimensions the spec gives Cortex; a status of others is about to change. */
  observe(
    namespace: string,
    name: string,
    previous: EmbeddingsStatus | undefined,
    wanted: { model: string; dimensions: number },
    cortexAvailable: boolean,
  ): { condition: ConditionInput; status?: EmbeddingsStatus; nextInMs?: number } {
    const key = `${namespace}/${name}`;
    const state = this.watched.get(key) ?? { reading: false };
    this.watched.set(key, state);
    // Nothing read in this process yet (a new leader, a restart): status stands until a read says otherwise.
    const status = state.status ?? previous;
    const moving =
      status === undefined ||
      status.state === "starting" ||
      status.state === "reembedding" ||
      status.model !== wanted.model ||
      status.dimensions !== wanted.dimensions;
    const pollMs = moving ? movingPollMs : settledPollMs;
    const now = this.options.now();
    const dueInMs = state.lastReadMs === undefined ? 0 : state.lastReadMs + pollMs - now;
    const reachable = cortexAvailable || this.options.ignoreDeployment === true;
    if (!state.reading && reachable && dueInMs <= 0) this.start(key, namespace, name, state, now);
    return {
      condition: embeddingsCondition(status),
      ...(status ? { status } : {}),
      ...(!state.reading && reachable ? { nextInMs: Math.max(1_000, dueInMs) } : {}),
    };
  }

  forget(namespace: string, name: string): void {
    this.watched.delete(`${namespace}/${name}`);
  }

  private start(key: string, namespace: string, name: string, state: WatchState, now: number): void {
    state.reading = true;
    state.lastReadMs = now;
    this.options
      .read(namespace, name)
      .then(
        (status) => {
          const before = state.status?.state;
          state.status = embeddingsStatus(status);
          if (before !== state.status.state) {
            this.options.log.info({ key, embeddings: state.status }, "embedding state changed");
          }
        },
        (error: unknown) => this.options.log.debug({ key, err: error }, "embedding status not read"),
      )
      .finally(() => {
        state.reading = false;
        if (this.watched.get(key) === state) this.options.settled(key);
      });
  }
}
