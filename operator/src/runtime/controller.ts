/**
 * A controller: a work queue of keys, N workers that never share a key, and a reconcile function that takes a key
 * and returns when to look again. Errors requeue with backoff, except a TerminalError, which waits for the next
 * event; success forgets the backoff; a periodic resync re-enqueues every key so drift is found even without an
 * event.
 */
import type { Logger } from "pino";
import { type Clock, systemClock, type TimerHandle } from "./clock.js";
import type { OperatorMetrics } from "./metrics.js";
import { TerminalError } from "./terminal-error.js";
import { WorkQueue, type WorkQueueOptions } from "./workqueue.js";

export interface ReconcileResult {
  /** Look again after this long (a schedule, a pending rollout), without counting as a failure. */
  requeueAfterMs?: number;
}

export type Reconcile = (key: string) => Promise<ReconcileResult | undefined>;

export interface ControllerOptions {
  name: string;
  reconcile: Reconcile;
  /** Keys of every primary object, for the periodic resync. */
  listKeys: () => string[];
  workers?: number;
  resyncMs?: number;
  clock?: Clock;
  queue?: Omit<WorkQueueOptions, "clock" | "observer">;
  metrics?: OperatorMetrics;
  log: Logger;
}

export class Controller {
  readonly queue: WorkQueue;
  private readonly clock: Clock;
  private resyncTimer: TimerHandle | undefined;
  private workers: Promise<void>[] = [];

  constructor(private readonly options: ControllerOptions) {
    this.clock = options.clock ?? systemClock;
    this.queue = new WorkQueue({
      ...options.queue,
      clock: this.clock,
      ...(options.metrics ? { observer: options.metrics.queueObserver(options.name) } : {}),
    });
  }

  get name(): string {
    return this.options.name;
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  start(): void {
    const workers = this.options.workers ?? 1;
    this.options.metrics?.maxConcurrentReconciles.set({ controller: this.name }, workers);
    for (const key of this.options.listKeys()) this.queue.add(key);
    this.workers = Array.from({ length: workers }, () => this.work());
    this.scheduleResync();
  }

  /** Stop intake and resync, let in-flight reconciles finish, release the workers. */
  async stop(): Promise<void> {
    if (this.resyncTimer !== undefined) this.clock.clearTimeout(this.resyncTimer);
    this.resyncTimer = undefined;
    await this.queue.shutDownWithDrain();
    await Promise.all(this.workers);
  }

  private scheduleResync(): void {
    const resyncMs = this.options.resyncMs ?? 300_000;
    this.resyncTimer = this.clock.setTimeout(() => {
      for (const key of this.options.listKeys()) this.queue.add(key);
      this.scheduleResync();
    }, resyncMs);
  }

  private async work(): Promise<void> {
    const { metrics, log } = this.options;
    const controller = this.name;
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      metrics?.activeWorkers.inc({ controller });
      const started = this.clock.now();
      try {
        const result = await this.options.reconcile(key);
        this.queue.forget(key);
        if (result?.requeueAfterMs !== undefined) {
          this.queue.addAfter(key, result.requeueAfterMs);
          metrics?.reconcileTotal.inc({ controller, result: "requeue_after" });
        } else {
          metrics?.reconcileTotal.inc({ controller, result: "success" });
        }
      } catch (error) {
        metrics?.reconcileTotal.inc({ controller, result: "error" });
        metrics?.reconcileErrors.inc({ controller });
        if (error instanceof TerminalError) {
          this.queue.forget(key);
          metrics?.terminalReconcileErrors.inc({ controller });
          log.warn({ controller, key, err: error }, "reconcile failed until the spec changes; not retrying");
        } else {
          const delayMs = this.queue.addRateLimited(key);
          log.warn({ controller, key, retryInMs: delayMs, err: error }, "reconcile failed");
        }
      } finally {
        metrics?.reconcileTime.observe({ controller }, (this.clock.now() - started) / 1000);
        metrics?.activeWorkers.dec({ controller });
        this.queue.done(key);
      }
    }
  }
}
