import { describe, expect, it } from "vitest";
import { oneAtATimePer } from "./one-at-a-time.js";

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("oneAtATimePer", () => {
  it("runs calls with one key in order, each after the previous settled, a rejection included", async () => {
    const oneAtATime = oneAtATimePer();
    const log: string[] = [];
    let release: () => void = () => undefined;
    const first = oneAtATime("p", async () => {
      log.push("first starts");
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      log.push("first ends");
      throw new Error("first failed");
    });
    const second = oneAtATime("p", async () => {
      log.push("second runs");
      return 2;
    });
    await settle();
    expect(log).toEqual(["first starts"]);
    release();
    await expect(first).rejects.toThrow("first failed");
    await expect(second).resolves.toBe(2);
    expect(log).toEqual(["first starts", "first ends", "second runs"]);
  });

  it("lets calls with other keys run meanwhile", async () => {
    const oneAtATime = oneAtATimePer();
    const log: string[] = [];
    const blocked = oneAtATime("a", () => new Promise<void>(() => undefined));
    await oneAtATime("b", async () => {
      log.push("b ran");
    });
    expect(log).toEqual(["b ran"]);
    void blocked;
  });
});
