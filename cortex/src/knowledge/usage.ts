/**
 * Usage counters: retrieval records what it returned, and the counts are written in one bulk request per flush
 * interval, off the request path. Between flushes the index does not change, which keeps repeated retrievals
 * byte-identical; a failed flush keeps its counts for the next one.
 */
export type UsageSink = (
  counts: ReadonlyMap<string, { index: string; count: number }>,
  at: string,
) => Promise<void>;

export class UsageTracker {
  private pending = new Map<string, { index: string; count: number }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly sink: UsageSink,
    private readonly intervalMs: number,
    private readonly clock: () => Date,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  record(index: string, ids: readonly string[]): void {
    for (const id of ids) {
      const entry = this.pending.get(id);
      if (entry === undefined) this.pending.set(id, { index, count: 1 });
      else entry.count += 1;
    }
  }

  /** Drop the counts of erased items: a flush would only fail on documents that are gone. */
  forget(ids: Iterable<string>): void {
    for (const id of ids) this.pending.delete(id);
  }

  pendingCount(): number {
    return this.pending.size;
  }

  async flush(): Promise<void> {
    if (this.flushing !== undefined) return this.flushing;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.sink(batch, this.clock().toISOString())
      .catch((error: unknown) => {
        for (const [id, entry] of batch) {
          const current = this.pending.get(id);
          if (current === undefined) this.pending.set(id, entry);
          else current.count += entry.count;
        }
        this.onError(error);
      })
      .finally(() => {
        this.flushing = undefined;
      });
    return this.flushing;
  }

  /** Stop the timer and write what is left (graceful shutdown). */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
