/**
 * Pure rules of the durable queue: what happens when it is full, and how long to wait after a failure.
 */

export type DropPolicy = "drop-oldest" | "drop-newest";

export type AdmitDecision =
  /** Store the item; first remove `evictOldest` items from the head (each one counted as a drop). */
  | { admit: true; evictOldest: number }
  /** The queue is full and the policy keeps what is waiting: the arriving item is dropped (counted). */
  | { admit: false };

export function admitToQueue(depth: number, maxItems: number, policy: DropPolicy): AdmitDecision {
  if (depth < maxItems) return { admit: true, evictOldest: 0 };
  if (policy === "drop-newest") return { admit: false };
  return { admit: true, evictOldest: depth - maxItems + 1 };
}

/** Exponential backoff: initial, doubled per consecutive failure, capped. */
export function backoffDelayMs(consecutiveFailures: number, initialMs: number, maxMs: number): number {
  if (consecutiveFailures <= 0) return 0;
  const exponent = Math.min(consecutiveFailures - 1, 30);
  return Math.min(maxMs, initialMs * 2 ** exponent);
}
