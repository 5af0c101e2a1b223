import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DurableQueue } from "./durable-queue.js";

const directories: string[] = [];
function freshDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), "remram-queue-test-"));
  directories.push(directory);
  return directory;
}
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

const parseText = (payload: unknown) =>
  typeof payload === "object" && payload !== null && typeof (payload as { text?: unknown }).text === "string"
    ? (payload as { text: string })
    : undefined;
const at = (second: number) => new Date(Date.UTC(2026, 10, 22, 10, 0, second));

describe("DurableQueue", () => {
  it("keeps items in arrival order across a reopen (a gateway restart)", () => {
    const directory = freshDirectory();
    const queue = new DurableQueue(directory, { maxItems: 10, dropPolicy: "drop-oldest" }, parseText);
    queue.enqueue("k1", { text: "one" }, at(1));
    queue.enqueue("k2", { text: "two" }, at(2));
    queue.enqueue("k3", { text: "three" }, at(2));
    const reopened = new DurableQueue(directory, { maxItems: 10, dropPolicy: "drop-oldest" }, parseText);
    expect(reopened.depth).toBe(3);
    expect(reopened.peek(10).map((entry) => entry.payload.text)).toEqual(["one", "two", "three"]);
  });

  it("stores a key once, also after a reopen, and again after it was removed", () => {
    const directory = freshDirectory();
    const queue = new DurableQueue(directory, { maxItems: 10, dropPolicy: "drop-oldest" }, parseText);
    expect(queue.enqueue("k1", { text: "one" }, at(1)).status).toBe("queued");
    expect(queue.enqueue("k1", { text: "one again" }, at(2)).status).toBe("duplicate");
    const reopened = new DurableQueue(directory, { maxItems: 10, dropPolicy: "drop-oldest" }, parseText);
    expect(reopened.enqueue("k1", { text: "one" }, at(3)).status).toBe("duplicate");
    const [entry] = reopened.peek(1);
    if (entry === undefined) throw new Error("expected an entry");
    reopened.remove(entry);
    expect(reopened.depth).toBe(0);
    expect(readdirSync(directory)).toEqual([]);
    expect(reopened.enqueue("k1", { text: "one" }, at(4)).status).toBe("queued");
  });

  it("drops the oldest when full under drop-oldest and reports which", () => {
    const queue = new DurableQueue(freshDirectory(), { maxItems: 2, dropPolicy: "drop-oldest" }, parseText);
    queue.enqueue("k1", { text: "one" }, at(1));
    queue.enqueue("k2", { text: "two" }, at(2));
    expect(queue.enqueue("k3", { text: "three" }, at(3))).toEqual({ status: "queued", evicted: ["k1"] });
    expect(queue.peek(10).map((entry) => entry.key)).toEqual(["k2", "k3"]);
  });

  it("refuses the newcomer when full under drop-newest", () => {
    const queue = new DurableQueue(freshDirectory(), { maxItems: 1, dropPolicy: "drop-newest" }, parseText);
    queue.enqueue("k1", { text: "one" }, at(1));
    expect(queue.enqueue("k2", { text: "two" }, at(2))).toEqual({ status: "dropped_full" });
    expect(queue.peek(10).map((entry) => entry.key)).toEqual(["k1"]);
  });

  it("removes corrupt files and unfinished writes instead of wedging the queue", () => {
    const directory = freshDirectory();
    const queue = new DurableQueue(directory, { maxItems: 10, dropPolicy: "drop-oldest" }, parseText);
    queue.enqueue("k1", { text: "one" }, at(1));
    writeFileSync(join(directory, `0000000000000-000001-${"a".repeat(64)}.json`), "{not json");
    writeFileSync(join(directory, "half-written.json.tmp"), "{");
    const reopened = new DurableQueue(directory, { maxItems: 10, dropPolicy: "drop-oldest" }, parseText);
    const corrupt: string[] = [];
    expect(reopened.peek(10, (name) => corrupt.push(name)).map((entry) => entry.key)).toEqual(["k1"]);
    expect(corrupt).toHaveLength(1);
    expect(readdirSync(directory)).toHaveLength(1);
  });
});
