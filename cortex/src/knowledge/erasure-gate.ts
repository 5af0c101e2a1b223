/**
 * One erasure at a time, and nothing that could write back what an erasure removes while it runs. Erasures queue
 * behind each other (exclusive); promotion, denial and a dream cycle's writes are shared sections: refused while an
 * erasure runs or waits, and an erasure waits for those already in flight (a promotion's git commit lands before
 * the history rewrite, never after it). A long reader that writes later (a dream cycle) holds a lease: its write
 * sections are refused once an erasure has been asked for since the lease began, since what it read may hold
 * erased data. In process is enough: Cortex is one replica, replaced with Recreate. One gate per index prefix, so
 * Cortex instances on other prefixes (the tests) do not wait for each other.
 */

/** Refused because of an erasure: the routes answer 503 with Retry-After, which callers retry. */
export class ErasureInProgressError extends Error {
  override readonly name = "ErasureInProgressError";
}

export interface ErasureLease {
  /** Run one write section; refused once an erasure has been asked for since the lease was taken. */
  write<T>(work: () => Promise<T>): Promise<T>;
}

export class ErasureGate {
  /** Erasures asked for so far: a lease taken before one sees the number move. */
  private requested = 0;
  /** Erasures running or queued. */
  private pending = 0;
  private sections = 0;
  private idleWaiters: (() => void)[] = [];
  private tail: Promise<unknown> = Promise.resolve();

  get erasing(): boolean {
    return this.pending > 0;
  }

  /** Run `work` as a shared section: refused while an erasure runs or waits; an erasure waits for it. */
  shared<T>(what: string, work: () => Promise<T>): Promise<T> {
    return this.section(what, undefined, work);
  }

  /** Taken at the start of a long read-then-write (refused while an erasure runs). */
  lease(what: string): ErasureLease {
    this.refuseWhileErasing(what);
    const taken = this.requested;
    return { write: (work) => this.section(what, taken, work) };
  }

  /** Run an erasure after those before it, once the shared sections in flight have finished. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    this.requested += 1;
    this.pending += 1;
    const run = async () => {
      await this.idle();
      return work();
    };
    const result = this.tail.then(run, run);
    this.tail = result.catch(() => undefined);
    return result.finally(() => {
      this.pending -= 1;
    });
  }

  private refuseWhileErasing(what: string): void {
    if (this.pending > 0)
      throw new ErasureInProgressError(
        `an erasure of a person's data is running: ${what} is refused until it ends (it would write back what the erasure removes); retry shortly`,
      );
  }

  private async section<T>(what: string, taken: number | undefined, work: () => Promise<T>): Promise<T> {
    this.refuseWhileErasing(what);
    if (taken !== undefined && taken !== this.requested)
      throw new ErasureInProgressError(
        `an erasure of a person's data ran while ${what} was reading: what it read may hold erased data, so it writes nothing more; run it again`,
      );
    this.sections += 1;
    try {
      return await work();
    } finally {
      this.sections -= 1;
      if (this.sections === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  private idle(): Promise<void> {
    if (this.sections === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}

const gates = new Map<string, ErasureGate>();

/** The gate of the Cortex whose indices start with this knowledge index's prefix. */
export function erasureGate(store: { indices: { knowledge: string } }): ErasureGate {
  const key = store.indices.knowledge;
  let gate = gates.get(key);
  if (gate === undefined) {
    gate = new ErasureGate();
    gates.set(key, gate);
  }
  return gate;
}
