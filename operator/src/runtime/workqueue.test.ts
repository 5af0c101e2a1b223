import { describe, expect, it } from "vitest";
import { exponentialDelay, fullBucket, reserveToken } from "./backoff.js";
import { FakeClock } from "./clock.js";
import { WorkQueue } from "./workqueue.js";

describe("the work queue", () => {
  it("holds a key once however often it is added", async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    for (let i = 0; i < 100; i++) queue.add("ns/a");
    queue.add("ns/b");
    expect(queue.len()).toBe(2);
    expect(await queue.get()).toBe("ns/a");
    expect(await queue.get()).toBe("ns/b");
  });

  it("never hands out a key that is being processed; a re-add comes back after done", async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    queue.add("ns/a");
    const key = await queue.get();
    queue.add("ns/a");
    queue.add("ns/a");
    expect(queue.len()).toBe(0);
    queue.done(key as string);
    expect(queue.len()).toBe(1);
    expect(await queue.get()).toBe("ns/a");
  });

  it("backs a failing key off exponentially up to the cap and resets it on forget", () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({
      clock,
      backoff: { baseDelayMs: 1_000, maxDelayMs: 8_000 },
      bucket: { qps: 1_000, burst: 1_000 },
    });
    const delays = [1, 2, 3, 4, 5].map(() => queue.addRateLimited("ns/a"));
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 8_000]);
    queue.forget("ns/a");
    expect(queue.addRateLimited("ns/a")).toBe(1_000);
  });

  it("delivers a rate-limited key only once its delay has passed", async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock, backoff: { baseDelayMs: 500, maxDelayMs: 60_000 } });
    queue.addRateLimited("ns/a");
    clock.advance(499);
    expect(queue.len()).toBe(0);
    clock.advance(1);
    expect(queue.len()).toBe(1);
  });

  it("caps the retry rate of many keys with the global token bucket", () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({
      clock,
      backoff: { baseDelayMs: 1, maxDelayMs: 1 },
      bucket: { qps: 10, burst: 5 },
    });
    const delays = Array.from({ length: 8 }, (_, i) => queue.addRateLimited(`ns/k${i}`));
    expect(delays.slice(0, 5)).toEqual([1, 1, 1, 1, 1]);
    expect(delays.slice(5)).toEqual([100, 200, 300]);
  });

  it("keeps the earliest deadline when a key is added after several delays", () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    queue.addAfter("ns/a", 10_000);
    queue.addAfter("ns/a", 2_000);
    queue.addAfter("ns/a", 5_000);
    clock.advance(2_000);
    expect(queue.len()).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("on shutdown releases idle workers and waits for in-flight keys", async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    queue.add("ns/a");
    const key = (await queue.get()) as string;
    const idleWorker = queue.get();
    let drained = false;
    const drain = queue.shutDownWithDrain().then(() => {
      drained = true;
    });
    expect(await idleWorker).toBeUndefined();
    await Promise.resolve();
    expect(drained).toBe(false);
    queue.done(key);
    await drain;
    expect(drained).toBe(true);
    queue.add("ns/b");
    expect(queue.len()).toBe(0);
  });
});

describe("the backoff arithmetic", () => {
  it("doubles from the base and stops at the cap", () => {
    const config = { baseDelayMs: 5, maxDelayMs: 1_000_000 };
    expect([0, 1, 2, 10].map((failures) => exponentialDelay(failures, config))).toEqual([5, 10, 20, 5_120]);
    expect(exponentialDelay(10_000, config)).toBe(1_000_000);
  });

  it("refills the token bucket with time, never above its burst", () => {
    const config = { qps: 2, burst: 2 };
    let state = fullBucket(config, 0);
    const first = reserveToken(state, config, 0);
    const second = reserveToken(first.state, config, 0);
    const third = reserveToken(second.state, config, 0);
    expect([first.delayMs, second.delayMs, third.delayMs]).toEqual([0, 0, 500]);
    state = reserveToken(third.state, config, 60_000).state;
    expect(state.tokens).toBe(1);
  });
});
