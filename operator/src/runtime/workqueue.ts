/**
 * A key-only work queue with client-go's guarantees: a key is queued at most once, a key being processed is never
 * handed to a second worker (re-adds mark it dirty and it comes back after `done`), failures back off per key and
 * through one global bucket, and delayed adds keep only the earliest deadline per key.
 */
import {
  applianceBackoff,
  type BackoffConfig,
  defaultTokenBucket,
  exponentialDelay,
  fullBucket,
  reserveToken,
  type TokenBucketConfig,
  type TokenBucketState,
} from "./backoff.js";
import { type Clock, systemClock, type TimerHandle } from "./clock.js";

/** Hooks for workqueue_* metrics; the runtime wires them to prom-client. */
export interface QueueObserver {
  added(): void;
  retried(): void;
  depth(depth: number): void;
  queued(waitedMs: number): void;
  worked(tookMs: number): void;
}

const silentObserver: QueueObserver = {
  added: () => {},
  retried: () => {},
  depth: () => {},
  queued: () => {},
  worked: () => {},
};

export interface WorkQueueOptions {
  clock?: Clock;
  backoff?: BackoffConfig;
  bucket?: TokenBucketConfig;
  observer?: QueueObserver;
}

const maxTimerMs = 2 ** 31 - 1;

export class WorkQueue {
  private readonly clock: Clock;
  private readonly backoff: BackoffConfig;
  private readonly bucketConfig: TokenBucketConfig;
  private readonly observer: QueueObserver;
  private bucket: TokenBucketState;
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Map<string, number>();
  private readonly addedAt = new Map<string, number>();
  private readonly delayed = new Map<string, { at: number; handle: TimerHandle }>();
  private readonly failures = new Map<string, number>();
  private waiters: Array<(key: string | undefined) => void> = [];
  private drainWaiters: Array<() => void> = [];
  private shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.backoff = options.backoff ?? applianceBackoff;
    this.bucketConfig = options.bucket ?? defaultTokenBucket;
    this.observer = options.observer ?? silentObserver;
    this.bucket = fullBucket(this.bucketConfig, this.clock.now());
  }

  /** Queue `key` now, unless it is already waiting; a key in progress comes back once it is done. */
  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.observer.added();
    this.dirty.add(key);
    this.addedAt.set(key, this.clock.now());
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** Queue `key` after `delayMs`; an earlier pending deadline for the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    // Node fires a timer longer than 2^31-1 ms at once; clamp instead of hot-looping.
    delayMs = Math.min(delayMs, maxTimerMs);
    const at = this.clock.now() + delayMs;
    const pending = this.delayed.get(key);
    if (pending !== undefined && pending.at <= at) return;
    if (pending !== undefined) this.clock.clearTimeout(pending.handle);
    const handle = this.clock.setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, delayMs);
    this.delayed.set(key, { at, handle });
  }

  /** Queue `key` after its backoff (grows with each call until `forget`) or the global bucket, whichever is longer. */
  addRateLimited(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    const reservation = reserveToken(this.bucket, this.bucketConfig, this.clock.now());
    this.bucket = reservation.state;
    const delayMs = Math.max(exponentialDelay(failures, this.backoff), reservation.delayMs);
    this.observer.retried();
    this.addAfter(key, delayMs);
    return delayMs;
  }

  /** Reset the key's backoff (after a successful reconcile). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key to process, or undefined once the queue is shut down and empty. */
  get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) return Promise.resolve(this.startProcessing(key));
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Mark `key` finished; if it was re-added meanwhile it is queued again. */
  done(key: string): void {
    const startedAt = this.processing.get(key);
    if (startedAt !== undefined) this.observer.worked(this.clock.now() - startedAt);
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) this.push(key);
    if (this.processing.size === 0) for (const resolve of this.drainWaiters.splice(0)) resolve();
  }

  len(): number {
    return this.queue.length;
  }

  /** Keys being processed right now and since when (for workqueue_unfinished_work_seconds). */
  inFlightSince(): number[] {
    return [...this.processing.values()];
  }

  isProcessing(key: string): boolean {
    return this.processing.has(key);
  }

  /** Stop intake, drop delayed adds, release idle workers, and resolve once in-flight keys are done. */
  shutDownWithDrain(): Promise<void> {
    this.shuttingDown = true;
    for (const { handle } of this.delayed.values()) this.clock.clearTimeout(handle);
    this.delayed.clear();
    this.queue.length = 0;
    for (const resolve of this.waiters.splice(0)) resolve(undefined);
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private push(key: string): void {
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      waiter(this.startProcessing(key));
      return;
    }
    this.queue.push(key);
    this.observer.depth(this.queue.length);
  }

  private startProcessing(key: string): string {
    const now = this.clock.now();
    this.observer.queued(now - (this.addedAt.get(key) ?? now));
    this.observer.depth(this.queue.length);
    this.addedAt.delete(key);
    this.dirty.delete(key);
    this.processing.set(key, now);
    return key;
  }
}
