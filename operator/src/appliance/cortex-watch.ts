/**
 * Something the operator asks an appliance's Cortex about in the background and reports in status (how current its
 * vectors are, how much room it has left): read while Cortex is available, as often as the last answer calls for,
 * never inside a reconcile; the appliance is requeued when a read settles. Until this process has read it (a new
 * leader, a restart), what status says stands.
 */
import type { Logger } from "pino";
import { ApplianceReason } from "../api/v1alpha1/remram-appliance.js";
import type { ConditionInput } from "../runtime/conditions.js";

/** The condition a watch reports until Cortex has answered, or while Cortex says it is still setting up. */
export function notReadYetCondition(type: string): ConditionInput {
  return {
    type,
    status: "Unknown",
    reason: ApplianceReason.NotCheckedYet,
    message: "asked once Cortex has set up its indices",
  };
}

interface WatchState<S> {
  reading: boolean;
  lastReadMs?: number;
  /** Cortex was seen unavailable since the last read (restarted, perhaps as a new release): ask at once. */
  stale?: boolean;
  status?: S;
}

export class CortexWatch<S> {
  private readonly watched = new Map<string, WatchState<S>>();

  constructor(
    private readonly options: {
      read: (namespace: string, name: string) => Promise<S>;
      /** What is read, for the log. */
      what: string;
      /** Read whether or not the Cortex Deployment is available (an operator reaching Cortex elsewhere). */
      ignoreDeployment?: boolean;
      now: () => number;
      /** Called with the appliance's key when a read settles (requeue it). */
      settled: (key: string) => void;
      log: Logger;
    },
  ) {}

  /** The last answer (or `previous`, from status), and a read started when `pollMs` of it has passed. */
  observe(
    namespace: string,
    name: string,
    previous: S | undefined,
    pollMs: (status: S | undefined) => number,
    cortexAvailable: boolean,
  ): { status?: S; nextInMs?: number } {
    const key = `${namespace}/${name}`;
    const state = this.watched.get(key) ?? { reading: false };
    this.watched.set(key, state);
    const status = state.status ?? previous;
    const now = this.options.now();
    const reachable = cortexAvailable || this.options.ignoreDeployment === true;
    if (!reachable) state.stale = true;
    const dueInMs =
      state.lastReadMs === undefined || state.stale === true ? 0 : state.lastReadMs + pollMs(status) - now;
    if (!state.reading && reachable && dueInMs <= 0) this.start(key, namespace, name, state, now);
    return {
      ...(status === undefined ? {} : { status }),
      ...(!state.reading && reachable ? { nextInMs: Math.max(1_000, dueInMs) } : {}),
    };
  }

  forget(namespace: string, name: string): void {
    this.watched.delete(`${namespace}/${name}`);
  }

  private start(key: string, namespace: string, name: string, state: WatchState<S>, now: number): void {
    state.reading = true;
    state.stale = false;
    state.lastReadMs = now;
    this.options
      .read(namespace, name)
      .then(
        (status) => {
          state.status = status;
        },
        (error: unknown) => this.options.log.debug({ key, err: error }, `${this.options.what} not read`),
      )
      .finally(() => {
        state.reading = false;
        if (this.watched.get(key) === state) this.options.settled(key);
      });
  }
}
