import { describe, expect, it } from "vitest";
import { ErasureGate, ErasureInProgressError, erasureGate } from "./erasure-gate.js";

/** A promise with its resolver, to hold work open. */
function held() {
  let release: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("erasure gate", () => {
  it("runs one erasure at a time, in order", async () => {
    const gate = new ErasureGate();
    const order: string[] = [];
    const first = held();
    const a = gate.exclusive(async () => {
      order.push("a starts");
      await first.promise;
      order.push("a ends");
    });
    const b = gate.exclusive(async () => {
      order.push("b runs");
    });
    await tick();
    expect(order).toEqual(["a starts"]);
    first.release();
    await Promise.all([a, b]);
    expect(order).toEqual(["a starts", "a ends", "b runs"]);
    expect(gate.erasing).toBe(false);
  });

  it("goes on with the next erasure after one fails", async () => {
    const gate = new ErasureGate();
    const failed = gate.exclusive(async () => {
      throw new Error("boom");
    });
    await expect(failed).rejects.toThrow("boom");
    await expect(gate.exclusive(async () => "done")).resolves.toBe("done");
  });

  it("refuses a shared section while an erasure runs or waits, and lets it in after", async () => {
    const gate = new ErasureGate();
    const erasing = held();
    const erasure = gate.exclusive(() => erasing.promise);
    await expect(gate.shared("promotion", async () => "promoted")).rejects.toBeInstanceOf(
      ErasureInProgressError,
    );
    expect(() => gate.lease("a dream cycle")).toThrow(/erasure .* is running/);
    erasing.release();
    await erasure;
    await expect(gate.shared("promotion", async () => "promoted")).resolves.toBe("promoted");
  });

  it("starts an erasure only once the shared sections in flight have finished", async () => {
    const gate = new ErasureGate();
    const order: string[] = [];
    const promoting = held();
    const promotion = gate.shared("promotion", async () => {
      await promoting.promise;
      order.push("promotion committed");
    });
    const erasure = gate.exclusive(async () => {
      order.push("erasure");
    });
    await tick();
    expect(order).toEqual([]);
    promoting.release();
    await Promise.all([promotion, erasure]);
    expect(order).toEqual(["promotion committed", "erasure"]);
  });

  it("refuses a lease's writes once an erasure was asked for since it was taken", async () => {
    const gate = new ErasureGate();
    const lease = gate.lease("a dream cycle");
    await expect(lease.write(async () => "written")).resolves.toBe("written");
    await gate.exclusive(async () => undefined);
    await expect(lease.write(async () => "written")).rejects.toThrow(/ran while a dream cycle was reading/);
    // A lease taken after the erasure writes again.
    await expect(gate.lease("a dream cycle").write(async () => "written")).resolves.toBe("written");
  });

  it("keeps one gate per index prefix", () => {
    const a = erasureGate({ indices: { knowledge: "one-knowledge" } });
    expect(erasureGate({ indices: { knowledge: "one-knowledge" } })).toBe(a);
    expect(erasureGate({ indices: { knowledge: "two-knowledge" } })).not.toBe(a);
  });
});
