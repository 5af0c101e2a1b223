/** Time as the runtime sees it; tests pass a fake one to drive backoff, resync and schedules deterministically. */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export interface TimerHandle {
  readonly id: number;
}

let nextTimerId = 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(callback, delayMs) {
    const timer = setTimeout(callback, delayMs);
    // Timers must not keep a stopping process alive.
    timer.unref();
    const handle = { id: nextTimerId++, timer };
    return handle;
  },
  clearTimeout(handle) {
    clearTimeout((handle as TimerHandle & { timer: NodeJS.Timeout }).timer);
  },
};

/** A clock that only moves when told to; due timers fire in time order during `advance`. */
export class FakeClock implements Clock {
  private current: number;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const id = nextTimerId++;
    this.timers.set(id, { at: this.current + Math.max(0, delayMs), callback });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle.id);
  }

  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const due = [...this.timers.entries()]
        .filter(([, timer]) => timer.at <= target)
        .sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
      if (due === undefined) break;
      this.timers.delete(due[0]);
      this.current = Math.max(this.current, due[1].at);
      due[1].callback();
    }
    this.current = target;
  }

  pendingTimers(): number {
    return this.timers.size;
  }
}
